import t from 'tap';
import { connectDatabase, isDatabaseUnavailable } from '@platform/shared/db';
import { createTestDatabase, sleep } from '../helpers/platform.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

// A connection reset by the network while queries keep arriving: every query settles, each with its answer or a
// connection error, and the pool works again once the server is reachable. The driver reports a reset socket
// ('error') some time before it reports it closed ('close', a later phase of the event loop). Queries sent in
// between went on the dying connection and were then dropped without an answer, never settling
// (scripts/patch-dependencies.ts has the fix): a single-flight batch awaiting one (the gateway's rate limiter, the
// events service's recording) waited for ever, and the path it serves answered 503 long after the server was back
// (test/resilience/postgres-unreachable.errors.test.ts, under CPU load). Here queries are sent on every turn of the event
// loop (setImmediate callbacks run between the two), so some land in that gap.
t.setTimeout(60_000);
/**
 * Far longer than a query takes to be answered or to fail, or to wait for the pool to reconnect once the server is
 * back (the reconnect backoff is capped at 1 s, db.ts): a query not settled by then hung.
 */
const HUNG_AFTER_MS = 5000;

const { url } = await createTestDatabase(t);
const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: 5432 });
const proxied = Object.assign(new URL(url), { port: String(proxy.port) }).toString();

/** 'answered', 'failed' (a connection error), or 'hung' when it has not settled within HUNG_AFTER_MS. */
function outcome(query: Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<string>((resolve) => {
    timer = setTimeout(resolve, HUNG_AFTER_MS, 'hung');
  });
  const settled = query.then(
    () => 'answered',
    (err: unknown) => (isDatabaseUnavailable(err) ? 'failed' : `failed otherwise: ${String(err)}`),
  );
  return Promise.race([settled, hung]).finally(() => clearTimeout(timer));
}

for (const max of [1, 4]) {
  t.test(
    `a pool of ${max}: queries sent while its connections are reset all settle, then the pool works`,
    async (t) => {
      const sql = connectDatabase(proxied, { max, applicationName: 'reset-test' });
      t.teardown(() => sql.end({ timeout: 1 }));
      // Every connection open and idle first.
      await Promise.all(Array.from({ length: max }, () => sql`select pg_sleep(0.05)`));

      const outcomes: Promise<string>[] = [];
      let sending = true;
      const send = () => {
        if (!sending) return;
        outcomes.push(outcome(sql`select 1`.execute()));
        setImmediate(send);
      };
      // Several senders, so that some of each turn's queries come after the driver's own write of that turn, whose
      // failure (the peer has reset) is one way the socket errors.
      for (let i = 0; i < 8; i++) setImmediate(send);
      await sleep(50);
      await proxy.refuse();
      await sleep(200);
      sending = false;
      // Back before any query could be called hung: those queued for a connection while it was refused get one now.
      await proxy.restore();

      const all = await Promise.all(outcomes);
      const counts = new Map<string, number>();
      for (const o of all) counts.set(o, (counts.get(o) ?? 0) + 1);
      t.comment(JSON.stringify([...counts]));
      t.same(
        all.filter((o) => o !== 'answered' && o !== 'failed'),
        [],
        `every query answered or failed with a connection error (${all.length} sent)`,
      );
      t.ok((counts.get('failed') ?? 0) > 0, 'some met the reset');
      t.same(await outcome(sql`select 1 as one`.execute()), 'answered', 'the pool answers once the server is back');
    },
  );
}
