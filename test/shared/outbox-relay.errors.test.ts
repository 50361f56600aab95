import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { streamName } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { ensureStreams } from '@platform/shared/nats';
import { enqueueEvents } from '@platform/shared/outbox';
import { startOutboxRelay } from '@platform/shared/outbox-relay';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { captureLogger, createTestDatabase, createTestNats } from '../helpers/platform.ts';
import { readStream } from '../helpers/stream.ts';

/**
 * The relay marks a batch published in the statement that claims it, before it publishes: the mark must hold only
 * when JetStream acknowledged every row. Here JetStream refuses (no stream takes the subject yet): the rows stay
 * unpublished and the relay says why; once the stream exists, the next pass publishes each of them once, in order.
 */
const db = await createTestDatabase(t);
const bus = await createTestNats(t);
const merchantId = (await createMerchant(db.sql, 'Outbox Refusal', 'growth'))!['id'] as string;

const jsm = await jetstreamManager(bus.nc);
for await (const s of jsm.streams.list()) {
  if (s.config.name.startsWith(bus.prefix.toUpperCase() + '_')) await jsm.streams.delete(s.config.name);
}

const logger = captureLogger('outbox');
// No poll within the test's time: only flush() starts passes.
const relay = startOutboxRelay({ sql: db.sql, nc: bus.nc, prefix: bus.prefix, log: logger.log, pollMs: 600_000 });
t.teardown(() => relay.stop());
await relay.flush();

const unpublished = async (ids: string[]) =>
  (
    await db.sql<
      { id: string }[]
    >`select id from outbox where id in ${db.sql(ids)} and published_at is null order by seq`
  ).map((r) => r.id);

t.test('a batch JetStream refuses stays unpublished, and is published once the stream takes it', async (t) => {
  const events = await db.sql.begin((tx) =>
    enqueueEvents(tx, [
      { merchantId, type: 'tax_form.submitted', data: { tax_form_id: newId('req') } },
      { merchantId, type: 'tax_form.submitted', data: { tax_form_id: newId('req') } },
    ]),
  );
  const ids = events.map((e) => e.id);

  t.equal(await relay.flush(), 0, 'the refused pass published nothing');
  t.same(await unpublished(ids), ids, 'both rows are still unpublished: the mark was rolled back with the pass');
  const warning = logger.lines
    .map((l) => JSON.parse(l) as { msg: string; err?: string })
    .find((l) => l.msg === 'outbox relay could not publish; will retry');
  t.ok(warning, 'the relay logged the refusal');
  t.match(
    warning?.err,
    { name: 'Error', message: /^JetStream did not take the message/ },
    'with the error and its reason',
  );

  await ensureStreams(bus.nc, bus.prefix);
  t.equal(await relay.flush(), 2, 'the next pass published both rows');
  t.same(await unpublished(ids), [], 'and marked them');
  const messages = await readStream(bus.nc, streamName(bus.prefix, 'DOMAIN_EVENTS'));
  t.same(
    messages.map((m) => m.msgId),
    ids,
    'each published once, in commit order',
  );
});
