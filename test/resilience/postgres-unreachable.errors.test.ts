import t from 'tap';
import { assertAnsweredAndRetry, assertProcessedOnce } from '../helpers/burst.ts';
import type { Asserts } from '../gateway/expect.ts';
import type { ApiResponse } from '../helpers/client.ts';
import { eventBody, startFullStack } from '../helpers/full-stack.ts';
import { DATABASE_SERVER, sleep } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

// Postgres unreachable for seconds under load, with no service restarted: every service reaches the file's database
// through a TCP proxy of this file's, which the test makes unreachable during a paced burst of events and restores:
// refusing connections (a server down), then swallowing everything (a dropped route: nothing answers, nothing fails).
// While it is gone every API call answers within the gateway's bound, RPC_TIMEOUT_MS (shortened to 2 s here so that
// a 4 s outage outlasts it), 201 or 503 UNAVAILABLE with Retry-After, never 500 and never later (a public referral
// link too); every service's /readyz says not ready. Once it is back, without a restart, every event answered 201
// (or 200/201 on a retry after a 503) gets exactly one level-0 commission and its webhook, and every service is
// ready again. Before the fix (shared/src/db.ts, services/gateway/src/app.ts and surfaces/tracking/router.ts) the pool
// waited up to 20 s after the server was back before reconnecting (the driver's backoff grows with each refused
// attempt), and the gateway's key and rate-limit reads had no bound: requests waited on them for as long as the
// database was gone. On a loaded machine the events path also stayed at 503 for minutes after the server was back: a
// query sent on a connection the refusal had just reset was dropped by the driver, never settling, and a batch that
// awaited it (the gateway's rate limiter runs one at a time) never ended (scripts/patch-dependencies.ts has the fix,
// postgres-reset.errors.test.ts tests it directly).
t.setTimeout(170_000);
const RPC_TIMEOUT_MS = 2000;
/** What a loaded CI machine may add to the bound: timers firing late, the answer's own trip. */
const SLACK_MS = 1500;

const nats = await startNatsServer(t);
const proxy = await startTcpProxy(t, DATABASE_SERVER);
const stack = await startFullStack(t, {
  merchant: { plan: 'scale', rateLimit: 60_000 },
  natsUrl: nats.url,
  env: { RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) },
  serviceDatabaseUrl: (url) => Object.assign(new URL(url), { port: String(proxy.port) }).toString(),
});

/** One event every `everyMs`, not waiting for answers; each answer with the time it took. */
async function timedBurst(
  tag: string,
  count: number,
  everyMs: number,
): Promise<{ responses: ApiResponse[]; tookMs: number[] }> {
  const sent: Promise<{ response: ApiResponse; took: number }>[] = [];
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    sent.push(
      stack.merchant.client
        .post('/api/v1/events', eventBody(tag, i))
        .then((response) => ({ response, took: Date.now() - started })),
    );
    await sleep(everyMs);
  }
  const answered = await Promise.all(sent);
  return { responses: answered.map((a) => a.response), tookMs: answered.map((a) => a.took) };
}

const readyStatuses = () =>
  Promise.all(
    Object.values(stack.services).map(async (s) => (await fetch(`http://127.0.0.1:${s.opsPort}/readyz`)).status),
  );

async function outageDuringBurst(
  t: Asserts & { comment(...m: unknown[]): void },
  tag: string,
  cut: () => Promise<void> | void,
  outageMs: number,
) {
  // One event every 25 ms (5 s): the database goes 1 s in, so the burst runs before, through and after the outage.
  const burst = timedBurst(tag, 200, 25);
  await sleep(1000);
  await cut();
  const cutAt = Date.now();
  // A public referral link during the outage: its rate is read from Postgres too.
  const referral = (async () => {
    await sleep(300);
    const started = Date.now();
    const res = await fetch(`${stack.platform.baseUrl}/r/${stack.merchant.id}/nobody`, { redirect: 'manual' });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      code: ((await res.json()) as { error?: { code?: string } }).error?.code,
      took: Date.now() - started,
    };
  })();
  // Every service notices within its readiness ping (every 2 s, unanswered after 1 s) and says so until a ping after
  // the restore answers. Each is watched on its own from the cut until that can have happened: on a loaded machine a
  // service's timer runs late, and one may turn not ready while another has just turned ready again.
  const services = Object.keys(stack.services);
  const saidNotReady = new Set<string>();
  let watching = true;
  const watched = (async () => {
    while (watching && saidNotReady.size < services.length) {
      (await readyStatuses()).forEach((status, i) => status === 503 && saidNotReady.add(services[i]!));
      await sleep(100);
    }
  })();
  await sleep(Math.max(0, outageMs - (Date.now() - cutAt)));
  await proxy.restore();
  await Promise.race([watched, sleep(1000)]);
  watching = false;
  await watched;
  const { responses, tookMs } = await burst;
  t.same(
    services.filter((name) => !saidNotReady.has(name)),
    [],
    'every service said not ready while the database was unreachable',
  );
  const link = await referral;
  t.same(
    { status: link.status, code: link.code, retryAfter: link.retryAfter },
    { status: 503, code: 'UNAVAILABLE', retryAfter: '1' },
    'a referral link answered 503 UNAVAILABLE with Retry-After',
  );
  t.ok(link.took <= RPC_TIMEOUT_MS + SLACK_MS, `and within ${RPC_TIMEOUT_MS} ms + ${SLACK_MS} ms (${link.took} ms)`);
  const late = tookMs.filter((ms) => ms > RPC_TIMEOUT_MS + SLACK_MS);
  t.same(
    late,
    [],
    `every call answered within ${RPC_TIMEOUT_MS} ms + ${SLACK_MS} ms (slowest ${Math.max(...tookMs)} ms)`,
  );
  t.ok(responses.filter((r) => r.status === 201).length > 0, 'events recorded around the outage');
  await assertAnsweredAndRetry(t, stack, responses, tag);
  await assertProcessedOnce(t, stack, tag, 200);
}

t.test(
  'connections refused for 3 s during a burst of 200 events: 503s in time while gone, then everything processed once',
  (t) => outageDuringBurst(t, 'refused', () => proxy.refuse(), 3000),
);

t.test(
  'nothing answering for 4 s during a burst of 200 events: 503s in time while gone, then everything processed once',
  (t) => outageDuringBurst(t, 'blackhole', () => proxy.blackhole(), 4000),
);
