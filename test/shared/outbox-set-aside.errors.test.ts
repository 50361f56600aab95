import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { streamName } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { enqueueEvents, oldestUnpublishedAgeSeconds } from '@platform/shared/outbox';
import { startOutboxRelay } from '@platform/shared/outbox-relay';
import { reconcileOutbox } from '@platform/dispatcher/queries/outbox';
import { reconcileConversions } from '@platform/commissions/reconcile';
import type { ConversionEnvelope } from '@platform/commissions/domain/envelope';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { conversion } from '../helpers/commissions.ts';
import { captureLogger, createTestDatabase, createTestNats } from '../helpers/platform.ts';
import { readStream } from '../helpers/stream.ts';

/**
 * A row the relay can never publish (larger than NATS's max_payload, or than the stream's max_msg_size) used to be
 * retried at the head of the outbox forever, holding back every later row of every merchant. The relay now sets it
 * aside (set_aside_at and set_aside_reason, migration 024), counts it, logs it, and publishes the rest in order, in
 * the same pass. The outbox-lag gauge does not wait on it; the webhook reconciler fans it out once from Postgres.
 */
const db = await createTestDatabase(t);
const bus = await createTestNats(t);
const bad = (await createMerchant(db.sql, 'Oversize Events', 'growth'))!['id'] as string;
const good = (await createMerchant(db.sql, 'Ordinary Events', 'growth'))!['id'] as string;

const logger = captureLogger('outbox');
const registry = new Registry();
// Two rows per batch, so that a pass goes on past a batch that set a row aside; no poll: only flush() starts passes.
const relay = startOutboxRelay({
  sql: db.sql,
  nc: bus.nc,
  prefix: bus.prefix,
  log: logger.log,
  batchSize: 2,
  pollMs: 600_000,
  registry,
});
t.teardown(() => relay.stop());
await relay.flush();

const event = (merchantId: string, bytes = 0) => ({
  merchantId,
  type: 'tax_form.submitted' as const,
  data: { tax_form_id: newId('req'), ...(bytes > 0 ? { padding: 'x'.repeat(bytes) } : {}) },
});
const write = (events: ReturnType<typeof event>[]) =>
  db.sql.begin((tx) => enqueueEvents(tx, events)).then((rows) => rows.map((r) => r.id));

const stateOf = async (ids: string[]) =>
  db.sql<{ id: string; published: boolean; set_aside: boolean; reason: string | null }[]>`
    select id, published_at is not null as published, set_aside_at is not null as set_aside,
           set_aside_reason as reason
    from outbox where id in ${db.sql(ids)} order by seq`;
const streamIds = async () => (await readStream(bus.nc, streamName(bus.prefix, 'DOMAIN_EVENTS'))).map((m) => m.msgId);
const setAsideLogs = () =>
  logger.lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'outbox row set aside: it can never be published');

t.test('a row larger than max_payload is set aside; the rows after it, of another merchant, publish', async (t) => {
  const [before, huge, after1, after2] = await write([event(good), event(bad, 1_100_000), event(good), event(good)]);
  const started = Date.now();
  t.equal(await relay.flush(), 3, 'one pass published the three ordinary rows');
  t.ok(Date.now() - started < 1000, 'at once, not after a retry');
  t.same(await streamIds(), [before, after1, after2], 'in commit order, the oversize row not among them');
  const states = await stateOf([before!, huge!, after1!, after2!]);
  t.same(
    states.map((s) => [s.id, s.published, s.set_aside]),
    [
      [before, true, false],
      [huge, false, true],
      [after1, true, false],
      [after2, true, false],
    ],
  );
  t.match(states[1]!.reason, /bytes exceed the NATS server's max_payload of 1048576 bytes/, 'with the reason');
  t.match(setAsideLogs(), [{ level: 'error', outbox_id: huge, merchant_id: bad, type: 'tax_form.submitted' }]);
  t.equal(await oldestUnpublishedAgeSeconds(db.sql), 0, 'the outbox-lag gauge does not wait on a set-aside row');

  t.equal(await relay.flush(), 0, 'the next pass does not take it again');
  t.equal(setAsideLogs().length, 1, 'nor log it again');
  t.match(
    await registry.getSingleMetricAsString('outbox_set_aside_total'),
    /^outbox_set_aside_total 1$/m,
    'counted once',
  );
});

t.test('a row the stream refuses for good (max_msg_size) is set aside; the rest publish', async (t) => {
  const jsm = await jetstreamManager(bus.nc);
  const name = streamName(bus.prefix, 'DOMAIN_EVENTS');
  const { config } = await jsm.streams.info(name);
  await jsm.streams.update(name, { ...config, max_msg_size: 64 * 1024 });
  t.teardown(() => jsm.streams.update(name, { ...config, max_msg_size: -1 }));

  const published = (await streamIds()).length;
  const [first, refused, last] = await write([event(good), event(bad, 100_000), event(good)]);
  t.equal(await relay.flush(), 2);
  t.same((await streamIds()).slice(published), [first, last], 'the rows around it are published');
  const [, state] = await stateOf([first!, refused!, last!]);
  t.match(state, { published: false, set_aside: true, reason: /message size exceeds maximum allowed/ });
  t.equal(await relay.flush(), 0, 'and not taken again');
  t.match(await registry.getSingleMetricAsString('outbox_set_aside_total'), /^outbox_set_aside_total 2$/m);
});

t.test('the webhook reconciler fans a set-aside event out once, and passes it', async (t) => {
  const aside = await db.sql<{ id: string; seq: string }[]>`
    select id, seq from outbox where set_aside_at is not null order by seq`;
  t.equal(aside.length, 2);
  await reconcileOutbox(db.sql, 0);
  const messages = await db.sql<{ id: string }[]>`
    select id from webhook_messages where id in ${db.sql(aside.map((a) => a.id))}`;
  t.equal(messages.length, 2, 'recorded from Postgres for the merchant’s endpoints (none here)');
  const [mark] = await db.sql<{ seq: string }[]>`select seq from webhook_fanout_watermark`;
  t.ok(BigInt(mark!.seq) >= BigInt(aside[1]!.seq), 'the watermark moved past them');
  t.same(await reconcileOutbox(db.sql, 0), { checked: 0, created: 0 }, 'a second pass finds nothing: no loop');
});

t.test('the conversion reconciler takes a set-aside conversion.recorded once, and passes it', async (t) => {
  const [row] = await db.sql.begin((tx) =>
    enqueueEvents(tx, [
      {
        merchantId: bad,
        type: 'conversion.recorded',
        data: { ...conversion({ affiliate_id: null }), external_id: 'x'.repeat(1_100_000) },
      },
    ]),
  );
  await relay.flush();
  const [state] = await stateOf([row!.id]);
  t.match(state, { published: false, set_aside: true });
  const seen: ConversionEnvelope[] = [];
  const pass = () =>
    reconcileConversions(db.sql, {
      settleMs: 0,
      log: logger.log,
      process: async (envelopes) => {
        seen.push(...envelopes);
        return envelopes.map(() => ({ kind: 'duplicate' as const }));
      },
    });
  await pass();
  await pass();
  const mine = seen.filter((e) => e.id === row!.id);
  const skipped = logger.lines.filter((l) => l.includes('outbox conversion cannot be processed'));
  t.equal(mine.length + skipped.length, 1, 'processed (or skipped as unprocessable) once, not on every pass');
  const [mark] = await db.sql<{ seq: string }[]>`select seq from conversion_reconcile_watermark`;
  const [written] = await db.sql<{ seq: string }[]>`select seq from outbox where id = ${row!.id}`;
  t.ok(BigInt(mark!.seq) >= BigInt(written!.seq), 'the watermark moved past it');
});
