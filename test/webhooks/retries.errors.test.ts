import t from 'tap';
import {
  nextAttemptDelayMs,
  parseRetryAfter,
  WEBHOOK_BACKOFF_MS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_RETRY_AFTER_CAP_MS,
} from '@platform/shared/webhooks';
import { eventually, sleep, startPlatform } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { waitsOnLock } from '../helpers/locks.ts';
import { startDispatcher, type LoggedDelivery } from '../helpers/webhooks.ts';

t.test('the production backoff table and Retry-After rules, as data', async (t) => {
  const s = 1000;
  const m = 60 * s;
  const h = 60 * m;
  t.same(WEBHOOK_BACKOFF_MS, [5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h]);
  t.equal(WEBHOOK_MAX_ATTEMPTS, 10);
  t.same(
    [1, 2, 9].map((n) => nextAttemptDelayMs(n, 1, null)),
    [5 * s, 5 * m, 24 * h],
  );
  t.equal(nextAttemptDelayMs(1, 0.001, null), 5, 'the scale multiplies the table');
  t.equal(nextAttemptDelayMs(1, 1, 60 * s), 60 * s, 'Retry-After later than the table wins');
  t.equal(nextAttemptDelayMs(2, 1, 60 * s), 5 * m, 'Retry-After sooner than the table does not');
  t.equal(nextAttemptDelayMs(1, 0.001, 3 * s), 3 * s, 'Retry-After is never scaled');
  t.equal(nextAttemptDelayMs(1, 1, 48 * h), WEBHOOK_RETRY_AFTER_CAP_MS, 'capped at 24 hours');
  const now = Date.parse('2026-11-22T10:00:00Z');
  t.equal(parseRetryAfter('120', now), 120_000);
  t.equal(parseRetryAfter('Sun, 22 Nov 2026 10:01:30 GMT', now), 90_000);
  t.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now), 0, 'a date in the past: no extra wait');
  t.equal(parseRetryAfter('soon', now), null);
  t.equal(parseRetryAfter(undefined, now), null);
});

const platform = await startPlatform(t);
const { client } = await platform.merchant();

async function endpointFor(url: string, extra: Record<string, unknown> = {}) {
  const res = await client.post('/api/v1/webhook_endpoints', { url, event_types: ['commission.approved'], ...extra });
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.text}`);
  return res.body as { id: string; secret: string };
}
const sendTest = async (endpointId: string) => {
  const res = await client.post(`/api/v1/webhook_endpoints/${endpointId}/test`, { event_type: 'commission.approved' });
  if (res.status !== 201) throw new Error(`test event not sent: ${res.text}`);
  return res.body as LoggedDelivery;
};
const deliveries = async (endpointId: string) =>
  (await client.get(`/api/v1/webhook_endpoints/${endpointId}/deliveries`)).body.data as LoggedDelivery[];
const deliveryOf = async (endpointId: string, id: string) => (await deliveries(endpointId)).find((d) => d.id === id)!;
const settled = (endpointId: string, id: string, status: string) =>
  eventually(
    async () => {
      const d = await deliveryOf(endpointId, id);
      return d.status === status ? d : undefined;
    },
    15_000,
    `delivery ${id} ${status}`,
  );

t.test('with the table scaled to a tenth (5 s → 500 ms)', async (t) => {
  const { close } = await startDispatcher(t, platform, { WEBHOOK_BACKOFF_SCALE: '0.1' });
  t.teardown(close);

  t.test('500 then 200: retried after the first delay of the table', async (t) => {
    const receiver = await startReceiver(t, (_req, n, res) => {
      res.statusCode = n === 1 ? 500 : 200;
      res.end(n === 1 ? 'boom' : 'ok');
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = await sendTest(endpoint.id);
    const done = await settled(endpoint.id, sent.id, 'succeeded');
    t.equal(receiver.received.length, 2);
    const [first, second] = receiver.received;
    t.ok(second!.at - first!.at >= 500, `the retry waited the scaled 5 s (${second!.at - first!.at} ms)`);
    t.equal(first!.id, second!.id, 'the same webhook-id on the retry');
    t.equal(first!.body, second!.body, 'the same body bytes');
    t.equal(done.attempt_count, 2);
    t.same(
      done.attempts.map((a) => [a.status_code, a.error, a.response_body]),
      [
        [500, null, 'boom'],
        [200, null, 'ok'],
      ],
    );
    const ep = (await client.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body;
    t.equal(ep.consecutive_failures, 0, 'reset by the success');
    t.type(ep.last_success_at, 'string');
  });

  t.test('the log shows a delivery and its attempts as of one moment, not between two writes', async (t) => {
    const receiver = await startReceiver(t, (_req, _n, res) => {
      res.statusCode = 400;
      res.end();
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = await sendTest(endpoint.id);
    await settled(endpoint.id, sent.id, 'dead_lettered');
    // An attempt is recorded with its delivery's new state in one statement; a read that starts before it commits
    // and reads the attempts after must not show the new attempt beside the old state.
    const writer = await platform.sql.reserve();
    t.teardown(async () => {
      // A failure half-way must not leave the lock held for the subtests after this one.
      await writer`rollback`.catch(() => {});
      writer.release();
    });
    await writer`begin`;
    await writer`lock table webhook_attempts in access exclusive mode`;
    const reading = deliveryOf(endpoint.id, sent.id);
    reading.catch(() => {}); // awaited below; a failure before then is reported there
    // The log read itself waits (the dispatcher's sweeper may wait on other locks meanwhile).
    await waitsOnLock(platform.sql, 'dispatcher', 'webhook_attempts');
    await writer`insert into webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms, response_body)
      values (${sent.id}, now(), 400, null, 1, '')`;
    await writer`update webhook_deliveries set attempt_count = attempt_count + 1 where id = ${sent.id}`;
    await writer`commit`;
    const read = await reading;
    t.equal(read.attempts.length, read.attempt_count, `one moment: ${read.attempt_count} attempts counted`);
  });

  t.test('429 with a Retry-After longer than the next delay: no attempt before it', async (t) => {
    const receiver = await startReceiver(t, (_req, n, res) => {
      if (n === 1) {
        res.writeHead(429, { 'retry-after': '2' });
        res.end('slow down');
      } else res.end('ok');
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = await sendTest(endpoint.id);
    const retrying = await settled(endpoint.id, sent.id, 'retrying');
    t.equal(retrying.attempts[0]!.status_code, 429);
    await settled(endpoint.id, sent.id, 'succeeded');
    const [first, second] = receiver.received;
    t.ok(
      second!.at - first!.at >= 2000,
      `waited for Retry-After: 2 (${second!.at - first!.at} ms), not the 500 ms of the table`,
    );
  });
});

t.test('with the table scaled to 1/100000 (all ten attempts within seconds)', async (t) => {
  const { close } = await startDispatcher(t, platform, {
    WEBHOOK_BACKOFF_SCALE: '0.00001',
    WEBHOOK_ENDPOINT_CONCURRENCY: '1',
    WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000',
    WEBHOOK_CONNECT_TIMEOUT_MS: '500',
  });
  t.teardown(close);

  t.test('400: dead-lettered after one attempt', async (t) => {
    const receiver = await startReceiver(t, (_req, _n, res) => {
      res.statusCode = 400;
      res.end('{"error":"bad"}');
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = await sendTest(endpoint.id);
    const dead = await settled(endpoint.id, sent.id, 'dead_lettered');
    t.equal(dead.dead_letter_reason, 'client_error');
    t.equal(dead.attempt_count, 1);
    t.equal(dead.next_attempt_at, null);
    t.same(
      dead.attempts.map((a) => a.status_code),
      [400],
    );
    t.equal(dead.attempts[0]!.response_body, '{"error":"bad"}');
    await sleep(300);
    t.equal(receiver.received.length, 1, 'no retry');
    const ep = (await client.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body;
    t.match(ep, { enabled: true, consecutive_failures: 1 });
  });

  t.test('410: the endpoint is disabled and its pending deliveries dead-lettered', async (t) => {
    const receiver = await startReceiver(t, async (_req, _n, res) => {
      await sleep(400); // the other four deliveries are created and wait behind this one (one at a time)
      res.statusCode = 410;
      res.end('gone');
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await sendTest(endpoint.id));
    const all = await eventually(
      async () => {
        const ds = await deliveries(endpoint.id);
        return ds.length === 5 && ds.every((d) => d.status === 'dead_lettered') ? ds : undefined;
      },
      10_000,
      'all five dead-lettered',
    );
    t.equal(receiver.received.length, 1, 'only the first was attempted');
    const gone = all.filter((d) => d.dead_letter_reason === 'gone');
    t.equal(gone.length, 1);
    t.same(
      gone[0]!.attempts.map((a) => a.status_code),
      [410],
    );
    t.same(
      all.filter((d) => d.id !== gone[0]!.id).map((d) => [d.dead_letter_reason, d.attempt_count]),
      Array(4).fill(['endpoint_disabled', 0]),
    );
    const ep = (await client.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body;
    t.match(ep, { enabled: false, disabled_reason: 'gone' });
    // Nothing new goes to it while disabled.
    const blocked = await client.post(`/api/v1/webhook_endpoints/${endpoint.id}/test`, {
      event_type: 'commission.approved',
    });
    t.equal(blocked.status, 400);
    t.equal(blocked.body.error.code, 'INVALID_INPUT');
  });

  t.test('ten failed attempts: dead-lettered, with every attempt in the log', async (t) => {
    const receiver = await startReceiver(t, (_req, _n, res) => {
      res.statusCode = 503;
      res.end('x'.repeat(5000));
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = await sendTest(endpoint.id);
    const dead = await settled(endpoint.id, sent.id, 'dead_lettered');
    t.equal(dead.dead_letter_reason, 'max_attempts');
    t.equal(dead.attempt_count, 10);
    t.equal(dead.attempts.length, 10);
    t.ok(
      dead.attempts.every((a) => a.status_code === 503 && a.response_body === 'x'.repeat(1024)),
      'the first KiB of each response',
    );
    t.equal(receiver.received.length, 10);
    t.equal(new Set(receiver.received.map((r) => r.id)).size, 1, 'one webhook-id throughout');
    const ep = (await client.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body;
    t.match(ep, { enabled: true, consecutive_failures: 10 }, 'below the default threshold of 15');
  });

  t.test('consecutive failures reaching the threshold disable the endpoint; re-enabling resets', async (t) => {
    const receiver = await startReceiver(t, (_req, _n, res) => {
      res.statusCode = 500;
      res.end();
    });
    const endpoint = await endpointFor(receiver.url, { failure_threshold: 3 });
    const sent = await sendTest(endpoint.id);
    const dead = await settled(endpoint.id, sent.id, 'dead_lettered');
    t.equal(dead.dead_letter_reason, 'endpoint_disabled', 'dead-lettered when it came due on a disabled endpoint');
    t.equal(dead.attempt_count, 3);
    t.equal(receiver.received.length, 3);
    const ep = (await client.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body;
    t.match(ep, { enabled: false, disabled_reason: 'failure_threshold', consecutive_failures: 3 });

    const enabled = await client.patch(`/api/v1/webhook_endpoints/${endpoint.id}`, { enabled: true });
    t.equal(enabled.status, 200);
    t.match(enabled.body, { enabled: true, disabled_reason: null, consecutive_failures: 0 });

    receiver.setResponder((_req, _n, res) => void res.end('ok'));
    const replay = await client.post(`/api/v1/webhook_deliveries/${sent.id}/replay`);
    t.equal(replay.status, 200);
    t.same(replay.body, { replayed: 1 });
    const ok = await settled(endpoint.id, sent.id, 'succeeded');
    t.equal(ok.attempt_count, 1, 'a replay starts a new series');
    t.equal(ok.attempts.length, 4, 'the log keeps every attempt');
  });

  t.test('a redirect is not followed and is retried; a timeout is retried', async (t) => {
    const elsewhere = await startReceiver(t);
    const receiver = await startReceiver(t, (_req, n, res) => {
      if (n === 1) {
        res.writeHead(302, { location: elsewhere.url });
        res.end();
      } else if (n === 2) {
        // never answers: the 1 s attempt timeout ends it
      } else res.end('ok');
    });
    const endpoint = await endpointFor(receiver.url);
    const sent = await sendTest(endpoint.id);
    const done = await settled(endpoint.id, sent.id, 'succeeded');
    t.same(
      done.attempts.map((a) => [a.status_code, a.error]),
      [
        [302, null],
        [null, 'timeout'],
        [200, null],
      ],
    );
    t.equal(elsewhere.received.length, 0, 'the redirect target was never contacted');
  });

  t.test('connection refused is retried like a 5xx', async (t) => {
    const endpoint = await endpointFor('http://127.0.0.1:9/nothing-listens', { failure_threshold: 2 });
    const sent = await sendTest(endpoint.id);
    const dead = await settled(endpoint.id, sent.id, 'dead_lettered');
    t.same(
      dead.attempts.map((a) => [a.status_code, a.error]),
      [
        [null, 'connection refused'],
        [null, 'connection refused'],
      ],
    );
  });
});
