import t from 'tap';
import type postgres from 'postgres';
import { newId } from '@platform/shared/ids';
import { partitionsOf } from '@platform/shared/partitions';
import { findEventsByKeys, insertEventsWithOutbox } from '@platform/events/queries/conversion-events';
import { migrateBefore, migrateWhileWriting } from '../helpers/migrations.ts';
import { purchase } from '../helpers/plans.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * The migrations that move conversion events' keys to conversion_event_keys and partition the events by month (039
 * to 041) run on a database that has events, while an events service of the previous version keeps recording, and
 * several replicas migrate at once: every event is kept with its key, a key taken before (or during) the migration
 * is still refused after it, and the previous version's insert, which needs the old unique key, fails rather than
 * recording an event without its key.
 */
const FIRST = '039';
const db = await createTestDatabase(t, { migrated: false });
const later = await migrateBefore(db.sql, FIRST);

const merchantId = newId('mer');
await db.sql`insert into merchants (id, name, plan) values (${merchantId}, 'Before', 'growth')`;
await db.sql`insert into conversion_events (id, merchant_id, event_type, external_id, amount, currency, body_hash, created_at)
             select 'evt_old' || n, ${merchantId}, 'purchase', 'old-' || n, n, 'USD', '\\x01', now() - n * interval '1 day'
             from generate_series(1, 300) n`;

/** The previous version's insert (services/events/src/queries/conversion-events.ts before 041), trimmed. */
const oldInsert = (sql: postgres.Sql, externalId: string) => sql`
  insert into conversion_events (id, merchant_id, event_type, external_id, amount, currency, body_hash)
  values (${newId('evt')}, ${merchantId}, 'purchase', ${externalId}, 5, 'USD', '\\x02')
  on conflict (merchant_id, event_type, external_id) do nothing
  returning id`;

t.test('migrating while the previous version records events, from three replicas at once', async (t) => {
  let repeatsTaken = 0;
  const { applied, written, failures } = await migrateWhileWriting(t, db.url, async (events, n) => {
    // A repeat of a key from before: refused by the old table's unique key all along.
    if ((await oldInsert(events, `old-${(n % 300) + 1}`)).length > 0) repeatsTaken++;
    return (await oldInsert(events, `during-${n}`)).length > 0 ? `during-${n}` : null;
  });
  const recorded = written;
  t.same(applied.flat().sort(), later, 'each migration applied once, by one replica');
  t.ok(recorded.length > 10, `the previous version recorded events until the swap (${recorded.length})`);
  t.equal(repeatsTaken, 0, 'no repeated key was taken');
  t.ok(failures.length > 0, 'and its inserts fail after it');
  t.same([...new Set(failures.map((f) => f.code))], ['42P10'], 'for want of the unique key: nothing recorded');

  const [kind] = await db.sql<{ relkind: string }[]>`select relkind from pg_class where relname = 'conversion_events'`;
  t.equal(kind!.relkind, 'p', 'conversion_events is partitioned');
  const [first] = await partitionsOf(db.sql, 'conversion_events');
  t.equal(first!.name, 'conversion_events_legacy', 'the old table is its first partition');
  t.equal(first!.from, -Infinity);
  const [counts] = await db.sql<{ events: number; keys: number; matched: number }[]>`
    select (select count(*)::int from conversion_events) as events,
           (select count(*)::int from conversion_event_keys) as keys,
           (select count(*)::int from conversion_event_keys k join conversion_events e
              on e.id = k.event_id and e.created_at = k.created_at and e.merchant_id = k.merchant_id
              and e.event_type = k.event_type and e.external_id = k.external_id) as matched`;
  t.same(
    counts,
    { events: 300 + recorded.length, keys: 300 + recorded.length, matched: 300 + recorded.length },
    "every event kept, each with its key naming it and its row's instant",
  );

  const event = (externalId: string) => purchase(merchantId, externalId, '7.00');
  t.same(await insertEventsWithOutbox(db.sql, [event('old-42')]), [], 'a key from before is refused after');
  t.same(await insertEventsWithOutbox(db.sql, [event(recorded[0]!)]), [], 'and one recorded during it');
  t.equal((await insertEventsWithOutbox(db.sql, [event('new-1')])).length, 1, 'a new key is recorded');
  const found = await findEventsByKeys(db.sql, [
    { merchantId, eventType: 'purchase', externalId: 'old-42' },
    { merchantId, eventType: 'purchase', externalId: 'new-1' },
  ]);
  t.same(found.map((e) => e.external_id).sort(), ['new-1', 'old-42'], 'old and new events are found by key');
});
