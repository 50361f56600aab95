import t from 'tap';
import { connectDatabase, isDatabaseUnavailable } from '@platform/shared/db';
import { createTestDatabase, DATABASE_SERVER, sleep } from '../helpers/platform.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

// A connection reset by the network while queries keep arriving: every query settles, each with its answer or a
// connection error, and the pool works again once the server is reachable. The driver reports a reset socket
// ('error') some time before it reports it closed ('close', a later phase of the event loop). Queries sent in
// between went on the dying connection and were then dropped without an answer, never settling
// (scripts/patch-dependencies.ts has the fix): a single-flight batch awaiting one (the gateway's rate limiter, the
// events service's recording) waited for ever, and the path it serves answered 503 long after the server was back
// (test/resilience/postgres-unreachable.errors.test.ts, under CPU load). Here queries are sent on every turn of the event
// loop (setImmediate callbacks run between the two), so some land in that gap.
t.setTimeout(90_000);
/**
 * How long a query may stay unsettled once the pool has answered a query sent after it. The pool answers in the order
 * queries were sent (one connection) or nearly so (several), so by then every earlier query has had its answer or its
 * error: one still unsettled was dropped. Judged from the pool's first answer, not from each send, so that a slow
 * reconnect on a loaded machine is not taken for a hang.
 */
const SETTLE_GRACE_MS = 5000;
/** How long the pool may take to answer again once the server is back (its reconnect backoff is capped at 1 s, db.ts). */
const BACK_WITHIN_MS = 30_000;

const { url } = await createTestDatabase(t);
const proxy = await startTcpProxy(t, DATABASE_SERVER);
const proxied = Object.assign(new URL(url), { port: String(proxy.port) }).toString();

/** A query's outcome so far: 'pending' until it settles, then 'answered' or 'failed' (a connection error). */
function track(query: Promise<unknown>) {
  const state = { outcome: 'pending', settled: Promise.resolve() };
  state.settled = query.then(
    () => {
      state.outcome = 'answered';
    },
    (err: unknown) => {
      state.outcome = isDatabaseUnavailable(err) ? 'failed' : `failed otherwise: ${String(err)}`;
    },
  );
  return state;
}

/** Resolves when `settled` does or after `ms`, whichever comes first. */
async function within(settled: Promise<unknown>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

for (const max of [1, 4]) {
  t.test(
    `a pool of ${max}: queries sent while its connections are reset all settle, then the pool works`,
    async (t) => {
      const sql = connectDatabase(proxied, { max, applicationName: 'reset-test' });
      t.teardown(() => sql.end({ timeout: 1 }));
      // Every connection open and idle first.
      await Promise.all(Array.from({ length: max }, () => sql`select pg_sleep(0.05)`));

      const sent: ReturnType<typeof track>[] = [];
      let sending = true;
      const send = () => {
        if (!sending) return;
        sent.push(track(sql`select 1`.execute()));
        setImmediate(send);
      };
      // Several senders, so that some of each turn's queries come after the driver's own write of that turn, whose
      // failure (the peer has reset) is one way the socket errors.
      for (let i = 0; i < 8; i++) setImmediate(send);
      await sleep(50);
      await proxy.refuse();
      await sleep(200);
      sending = false;
      // Back: those queued for a connection while it was refused get one now.
      await proxy.restore();

      const probe = track(sql`select 1 as one`.execute());
      await within(probe.settled, BACK_WITHIN_MS);
      t.same(probe.outcome, 'answered', 'the pool answers once the server is back');
      await within(Promise.all(sent.map((q) => q.settled)), SETTLE_GRACE_MS);

      const counts = new Map<string, number>();
      for (const q of sent) counts.set(q.outcome, (counts.get(q.outcome) ?? 0) + 1);
      t.comment(JSON.stringify([...counts]));
      t.same(
        sent.map((q) => q.outcome).filter((o) => o !== 'answered' && o !== 'failed'),
        [],
        `every query answered or failed with a connection error (${sent.length} sent)`,
      );
      t.ok((counts.get('failed') ?? 0) > 0, 'some met the reset');
    },
  );
}
