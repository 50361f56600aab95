import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { streamName, type DomainEvent } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { createLogger } from '@platform/shared/log';
import { enqueueEvent } from '@platform/shared/outbox';
import { HintPublisher } from '@platform/dispatcher/hints';
import { fanOut } from '@platform/dispatcher/queries/fan-out';
import { eventually, spawnService, startPlatform, type Platform } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { registerEndpoint, startDispatcher, TEST_DISPATCHER_ENV } from '../helpers/webhooks.ts';

const platform = await startPlatform(t);
const jsm = await jetstreamManager(platform.nc);

const commission = (i: number) => ({
  commission_id: `com_${String(i).padStart(26, '0')}`,
  affiliate_id: 'aff_00000000000000000000000000',
  amount: 1 + i / 100,
  currency: 'USD',
  status: 'approved',
  order_id: `order_${i}`,
  event_id: 'evt_00000000000000000000000000',
  level: 0,
});

/** Domain events through the real outbox and relay (the affiliates service in this process relays them). */
async function emit(p: Platform, merchantId: string, count: number, batch = 100): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += batch) {
    await p.sql.begin(async (tx) => {
      for (let i = start; i < Math.min(count, start + batch); i++)
        ids.push((await enqueueEvent(tx, merchantId, 'commission.approved', commission(i))).id);
    });
  }
  return ids;
}

/** The receiver answers before the dispatcher records the success: wait for the records to catch up. */
async function succeededCount(endpointId: string, expected: number): Promise<number> {
  const count = async () =>
    (
      await platform.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpointId} and status = 'succeeded'`
    )[0]!.n;
  await eventually(
    async () => ((await count()) === expected ? true : undefined),
    10_000,
    'the successes to be recorded',
  ).catch(() => {});
  return count();
}

const missing = (expected: string[], received: { id: string }[]) => {
  const got = new Set(received.map((r) => r.id));
  return expected.filter((id) => !got.has(id));
};

t.test('SIGKILL during a burst of 1,000 events: after a restart every delivery arrives', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const receiver = await startReceiver(t);
  const endpoint = await registerEndpoint(platform, merchantId, {
    url: receiver.url,
    event_types: ['commission.approved'],
  });
  const env = { ...platform.env, ...TEST_DISPATCHER_ENV, LOG_LEVEL: 'info' };

  const first = await spawnService(t, 'dispatcher', env);
  const emitting = emit(platform, merchantId, 1000);
  await eventually(
    async () => (receiver.received.length >= 150 ? true : undefined),
    30_000,
    '150 deliveries before the kill',
  );
  first.child.kill('SIGKILL');
  await first.exited;
  const ids = await emitting;
  const atKill = new Set(receiver.received.map((r) => r.id)).size;
  t.ok(atKill < 1000, `killed mid-burst (${atKill} of 1000 delivered)`);

  await spawnService(t, 'dispatcher', env);
  await eventually(
    async () => (missing(ids, receiver.received).length === 0 ? true : undefined),
    60_000,
    'every delivery after the restart',
  );
  t.same(missing(ids, receiver.received), [], 'zero missing');
  const duplicates = receiver.received.length - new Set(receiver.received.map((r) => r.id)).size;
  t.comment(`${receiver.received.length} requests for 1000 events: ${duplicates} duplicates, detectable by webhook-id`);
  t.equal(await succeededCount(endpoint.id, 1000), 1000, 'every delivery recorded as succeeded');
});

t.test('the attempt stream purged: the sweeper still delivers everything due', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const receiver = await startReceiver(t);
  const endpoint = await registerEndpoint(platform, merchantId, {
    url: receiver.url,
    event_types: ['commission.approved'],
  });
  // Deliveries recorded and hinted while no dispatcher runs, then every hint is purged.
  const hints = new HintPublisher(platform.prefix);
  hints.attach(platform.nc, createLogger({ service: 'test' }, 'silent'));
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const event: DomainEvent = {
      id: newId('msg'),
      type: 'commission.approved',
      created_at: new Date().toISOString(),
      merchant_id: merchantId,
      data: commission(i),
    };
    ids.push(event.id);
    await hints.publish(await platform.sql.begin((tx) => fanOut(tx, event)));
  }
  const stream = streamName(platform.prefix, 'WEBHOOK_ATTEMPTS');
  t.ok((await jsm.streams.info(stream)).state.messages >= 50, 'the hints were published');
  await jsm.streams.purge(stream);
  t.equal((await jsm.streams.info(stream)).state.messages, 0, 'and purged');

  const { close } = await startDispatcher(t, platform);
  await eventually(
    async () => (missing(ids, receiver.received).length === 0 ? true : undefined),
    20_000,
    'every due delivery',
  );
  t.same(missing(ids, receiver.received), []);
  t.equal(await succeededCount(endpoint.id, 50), 50);
  await close();
});

t.test('the domain-event stream purged before fan-out: the outbox reconciler still delivers', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const receiver = await startReceiver(t);
  await registerEndpoint(platform, merchantId, { url: receiver.url, event_types: ['commission.approved'] });
  const ids = await emit(platform, merchantId, 30);
  // Wait until the relay has published them all, then lose them: what JetStream does with an unsynced crash.
  await eventually(
    async () => {
      const [row] = await platform.sql<
        { left: number }[]
      >`select count(*)::int as left from outbox where published_at is null`;
      return row!.left === 0 ? true : undefined;
    },
    10_000,
    'the relay to publish',
  );
  await jsm.streams.purge(streamName(platform.prefix, 'DOMAIN_EVENTS'));

  const { close } = await startDispatcher(t, platform);
  await eventually(
    async () => (missing(ids, receiver.received).length === 0 ? true : undefined),
    20_000,
    'every event from the outbox',
  );
  t.same(missing(ids, receiver.received), []);
  await close();
});
