import t from 'tap';
import { streamName } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { startOutboxRelay } from '@platform/shared/outbox-relay';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { captureLogger, createTestDatabase, createTestNats, eventually, sleep } from '../helpers/platform.ts';
import { readStream } from '../helpers/stream.ts';

/**
 * The outbox relay paces the passes that commits wake (OUTBOX_RELAY_INTERVAL_MS): a commit after a quiet spell is
 * published at once, commits within the interval after a pass are published together by one pass at its end, and
 * `flush()` is never held back. Rows marked by one pass share its transaction's `published_at`.
 */
const INTERVAL_MS = 400;

const db = await createTestDatabase(t);
const bus = await createTestNats(t);
const merchantId = (await createMerchant(db.sql, 'Outbox Pacing', 'growth'))!['id'] as string;
// No poll within the test's time: only the wake-ups (and flush()) start passes.
const relay = startOutboxRelay({
  sql: db.sql,
  nc: bus.nc,
  prefix: bus.prefix,
  log: captureLogger('outbox').log,
  minIntervalMs: INTERVAL_MS,
  pollMs: 600_000,
});
t.teardown(() => relay.stop());

/** Commits one tax_form.submitted row in a transaction of its own, tells the relay, and answers the row's id. */
async function commitOne(): Promise<string> {
  const formId = newId('req');
  const [event] = await db.sql.begin((tx) =>
    enqueueEvents(tx, [{ merchantId, type: 'tax_form.submitted', data: { tax_form_id: formId } }]),
  );
  outboxCommitted(db.sql);
  return event!.id;
}

const publishedAt = async (ids: string[]) => {
  const rows = await db.sql<
    { id: string; published_at: Date | null }[]
  >`select id, published_at from outbox where id in ${db.sql(ids)}`;
  return new Map(rows.map((r) => [r.id, r.published_at]));
};
const allPublished = (ids: string[]) =>
  eventually(
    async () => {
      const at = await publishedAt(ids);
      return ids.every((id) => at.get(id)) ? ids.map((id) => at.get(id)!.getTime()) : undefined;
    },
    10_000,
    `${ids.length} row(s) published`,
  );

t.test('commits within the interval after a pass are published by one pass at its end', async (t) => {
  // The relay's pass at start has found nothing; wait out any interval so that the next commit meets a quiet relay.
  await sleep(INTERVAL_MS + 100);
  const first = await commitOne();
  const [firstAt] = await allPublished([first]);

  const second = await commitOne();
  const third = await commitOne();
  const [secondAt, thirdAt] = await allPublished([second, third]);
  t.equal(secondAt, thirdAt, 'the two later commits were marked by one pass');
  t.ok(
    secondAt! - firstAt! >= INTERVAL_MS / 2,
    `that pass began ${secondAt! - firstAt!} ms after the first one, not sooner than the interval`,
  );

  const messages = await readStream(bus.nc, streamName(bus.prefix, 'DOMAIN_EVENTS'));
  t.same(
    messages.map((m) => m.msgId).filter((id) => [first, second, third].includes(id!)),
    [first, second, third],
    'each published once, in commit order',
  );
});

t.test('flush() publishes at once, whatever the pacing', async (t) => {
  const id = newId('msg');
  await db.sql`insert into outbox (id, merchant_id, type, data) values (${id}, ${merchantId}, 'tax_form.submitted', '{}'::jsonb)`;
  // No outboxCommitted: only flush() can have published it when it resolves.
  t.equal(await relay.flush(), 1, 'flush published the row itself');
  const at = await publishedAt([id]);
  t.ok(at.get(id), 'marked published');
});
