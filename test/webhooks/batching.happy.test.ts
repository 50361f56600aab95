import t from 'tap';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { domainEventSubject, streamName, type DomainEvent } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { encodeJson } from '@platform/shared/nats';
import { enqueueEvent } from '@platform/shared/outbox';
import { eventually, sleep } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { registerEndpoint, startWebhookPlatform } from '../helpers/webhooks.ts';
import { settleEndpoints } from '@platform/dispatcher/queries/attempts';

// Batched fan-out, leasing in the fan-out transaction, batched recording with refill (docs/WEBHOOKS.md, steps 1-2).
const { platform } = await startWebhookPlatform(t);
const jsm = await jetstreamManager(platform.nc);
const hintStream = streamName(platform.prefix, 'WEBHOOK_ATTEMPTS');

const fraud = (i: number) => ({ affiliate_id: `aff_${i}`, rule: 'conversion_velocity', details: { n: i } });

/** A receiver that answers after `delayMs`, counting the requests in flight at once per endpoint. */
async function slowReceiver(test: Parameters<typeof startReceiver>[0], delayMs: number) {
  let inFlight = 0;
  let maxInFlight = 0;
  const receiver = await startReceiver(test, async (_req, _n, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await sleep(delayMs);
    inFlight--;
    res.end('ok');
  });
  return { receiver, maxInFlight: () => maxInFlight };
}

t.test('a burst fans out in batches and is attempted without hints, within each endpoint’s concurrency', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const endpoints = [];
  for (let i = 0; i < 3; i++) {
    const r = await slowReceiver(t, 20);
    const endpoint = await registerEndpoint(platform, merchantId, {
      url: r.receiver.url,
      event_types: ['fraud.flagged'],
    });
    endpoints.push({ ...r, endpoint });
  }
  const hintsBefore = (await jsm.streams.info(hintStream)).state.last_seq;
  const ids: string[] = [];
  await platform.sql.begin(async (tx) => {
    for (let i = 0; i < 60; i++) ids.push((await enqueueEvent(tx, merchantId, 'fraud.flagged', fraud(i))).id);
  });
  for (const { receiver } of endpoints) {
    await eventually(
      async () => (new Set(receiver.received.map((r) => r.id)).size === 60 ? true : undefined),
      30_000,
      'all 60 at each endpoint',
    );
  }
  for (const { receiver, maxInFlight } of endpoints) {
    t.same(new Set(receiver.received.map((r) => r.id)), new Set(ids));
    t.equal(receiver.received.length, 60, 'each event once');
    t.ok(maxInFlight() <= 4, `at most 4 in flight at the endpoint (${maxInFlight()})`);
    t.ok(maxInFlight() >= 2, `and more than one at a time (${maxInFlight()})`);
  }
  await eventually(
    async () => {
      const [row] = await platform.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries where merchant_id = ${merchantId} and status = 'succeeded' and locked_by is null`;
      return row!.n === 180 ? true : undefined;
    },
    10_000,
    'every success recorded and every lease released',
  );
  const [attempts] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.merchant_id = ${merchantId}`;
  t.equal(attempts!.n, 180, 'one attempt row per delivery');
  t.equal(
    (await jsm.streams.info(hintStream)).state.last_seq,
    hintsBefore,
    'no hint was published: the fan-out and the refill did it all',
  );
});

t.test('a batch holding an event of an unknown merchant: that one is terminated, the others delivered', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const receiver = await startReceiver(t);
  await registerEndpoint(platform, merchantId, { url: receiver.url, event_types: ['fraud.flagged'] });
  const js = jetstream(platform.nc);
  const event = (merchant: string, i: number): DomainEvent => ({
    id: newId('msg'),
    type: 'fraud.flagged',
    created_at: new Date().toISOString(),
    merchant_id: merchant,
    data: fraud(i),
  });
  const good = Array.from({ length: 10 }, (_, i) => event(merchantId, i));
  const bad = event('mer_00000000000000000000000000', 99);
  // Published back to back, so that the fan-out takes them in one batch.
  await Promise.all(
    [...good.slice(0, 5), bad, ...good.slice(5)].map((e) =>
      js.publish(domainEventSubject(platform.prefix, e.type), encodeJson(e), { msgID: e.id }),
    ),
  );
  await eventually(async () => (receiver.received.length >= 10 ? true : undefined), 15_000, 'the ten good events');
  t.same(new Set(receiver.received.map((r) => r.id)), new Set(good.map((e) => e.id)));
  const [row] = await platform.sql<
    { n: number }[]
  >`select count(*)::int as n from webhook_messages where id = ${bad.id}`;
  t.equal(row!.n, 0, 'nothing recorded for the unknown merchant');
  const consumer = await jsm.consumers.info(streamName(platform.prefix, 'DOMAIN_EVENTS'), 'dispatcher');
  t.equal(
    consumer.num_pending + consumer.num_ack_pending,
    0,
    'every message settled (the bad one terminated, not redelivered)',
  );
});

t.test('the endpoint bookkeeping of a batch of outcomes (settleEndpoints)', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const receiver = await startReceiver(t);
  const endpoint = await registerEndpoint(platform, merchantId, { url: receiver.url, event_types: ['fraud.flagged'] });
  const state = async () =>
    (
      await platform.sql<
        {
          enabled: boolean;
          disabled_reason: string | null;
          consecutive_failures: number;
          last_success_at: Date | null;
        }[]
      >`
      select enabled, disabled_reason, consecutive_failures, last_success_at from webhook_endpoints where id = ${endpoint.id}`
    )[0]!;
  const settle = (tally: { succeeded: boolean; failures: number; gone: boolean }) =>
    platform.sql.begin((tx) => settleEndpoints(tx, [{ endpointId: endpoint.id, ...tally }]));
  await platform.sql`update webhook_endpoints set failure_threshold = 5 where id = ${endpoint.id}`;

  await settle({ succeeded: false, failures: 2, gone: false });
  t.match(await state(), { enabled: true, consecutive_failures: 2, last_success_at: null }, 'failures add up');
  await settle({ succeeded: true, failures: 1, gone: false });
  const afterSuccess = await state();
  t.match(afterSuccess, { enabled: true, consecutive_failures: 1 }, 'a success resets; the failure after it counts');
  t.type(afterSuccess.last_success_at, Date);
  await settle({ succeeded: false, failures: 3, gone: false });
  t.match(await state(), { enabled: true, consecutive_failures: 4 }, 'below the threshold of 5');
  await settle({ succeeded: false, failures: 1, gone: false });
  t.match(
    await state(),
    { enabled: false, disabled_reason: 'failure_threshold', consecutive_failures: 5 },
    'reaching it disables',
  );
  await settle({ succeeded: false, failures: 1, gone: true });
  t.match(
    await state(),
    { enabled: false, disabled_reason: 'failure_threshold', consecutive_failures: 6 },
    'an endpoint already disabled keeps its reason',
  );

  await platform.sql`update webhook_endpoints set enabled = true, disabled_reason = null, consecutive_failures = 0, last_success_at = null where id = ${endpoint.id}`;
  await settle({ succeeded: true, failures: 0, gone: false });
  const touched = (await state()).last_success_at!.getTime();
  await settle({ succeeded: true, failures: 0, gone: false });
  t.equal((await state()).last_success_at!.getTime(), touched, 'last_success_at is written at most once a second');
  await settle({ succeeded: true, failures: 1, gone: true });
  t.match(
    await state(),
    { enabled: false, disabled_reason: 'gone', consecutive_failures: 1 },
    'a 410 disables at once',
  );
});
