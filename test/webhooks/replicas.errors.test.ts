import t from 'tap';
import { enqueueEvent } from '@platform/shared/outbox';
import { eventually, sleep } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { startDispatcher, startWebhookPlatform } from '../helpers/webhooks.ts';

// Long attempt timeouts: a hanging receiver stays hanging for the whole test.
const settings = { WEBHOOK_ATTEMPT_TIMEOUT_MS: '20000', WEBHOOK_CONNECT_TIMEOUT_MS: '1000' };
const { platform, dispatcherLogs: logsA } = await startWebhookPlatform(t, { ...settings, DISPATCHER_ID: 'replica-a' });
const { logs: logsB } = await startDispatcher(t, platform, { ...settings, DISPATCHER_ID: 'replica-b' });

async function emit(merchantId: string, count: number) {
  const ids: string[] = [];
  await platform.sql.begin(async (tx) => {
    for (let i = 0; i < count; i++) {
      const event = await enqueueEvent(tx, merchantId, 'fraud.flagged', {
        affiliate_id: `aff_${i}`,
        rule: 'conversion_velocity',
        details: { n: i },
      });
      ids.push(event.id);
    }
  });
  return ids;
}

t.test('two replicas: every delivery attempted once, never by both at the same time', async (t) => {
  const { client, id: merchantId } = await platform.merchant();
  const receivers = [];
  for (let i = 0; i < 2; i++) {
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    const receiver = await startReceiver(t, async (req, _n, res) => {
      const now = (inFlight.get(req.id) ?? 0) + 1;
      inFlight.set(req.id, now);
      if (now > 1) overlaps++;
      await sleep(15);
      inFlight.set(req.id, (inFlight.get(req.id) ?? 1) - 1);
      res.end('ok');
    });
    const created = await client.post('/api/v1/webhook_endpoints', {
      url: receiver.url,
      event_types: ['fraud.flagged'],
    });
    t.equal(created.status, 201);
    receivers.push({ receiver, overlaps: () => overlaps });
  }
  const ids = await emit(merchantId, 200);
  for (const { receiver } of receivers) {
    await eventually(
      async () => (new Set(receiver.received.map((r) => r.id)).size === 200 ? true : undefined),
      30_000,
      'all 200 at each endpoint',
    );
  }
  for (const { receiver, overlaps } of receivers) {
    t.equal(overlaps(), 0, 'no delivery was attempted concurrently');
    t.equal(receiver.received.length, 200, 'and none twice');
    t.same(new Set(receiver.received.map((r) => r.id)), new Set(ids));
  }
  const [row] = await platform.sql<{ twice: number }[]>`
    select count(*)::int as twice from (
      select a.delivery_id from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where d.merchant_id = ${merchantId} group by a.delivery_id having count(*) > 1) x`;
  t.equal(row!.twice, 0, 'one attempt per delivery in the records');
  const attemptsBy = (lines: string[]) => lines.filter((l) => l.includes('"msg":"webhook attempt"')).length;
  t.ok(
    attemptsBy(logsA) > 0 && attemptsBy(logsB) > 0,
    `both replicas worked (${attemptsBy(logsA)} / ${attemptsBy(logsB)})`,
  );
});

t.test("a hanging endpoint's backlog does not hold up a healthy endpoint", async (t) => {
  const { client, id: merchantId } = await platform.merchant();
  const hanging = await startReceiver(t, () => {
    // never answers
  });
  const healthy = await startReceiver(t);
  await client.post('/api/v1/webhook_endpoints', { url: hanging.url, event_types: ['fraud.flagged'] });
  await client.post('/api/v1/webhook_endpoints', { url: healthy.url, event_types: ['fraud.flagged'] });
  const ids = await emit(merchantId, 100);
  await eventually(
    async () => (healthy.received.length >= 100 ? true : undefined),
    15_000,
    'the healthy endpoint to get all 100',
  );
  t.same(new Set(healthy.received.map((r) => r.id)), new Set(ids));
  t.ok(hanging.received.length >= 1, 'the hanging endpoint was tried');
  t.ok(
    hanging.received.length <= 4,
    `at most its concurrency limit of 4 in flight (${hanging.received.length}), none answered yet`,
  );
});
