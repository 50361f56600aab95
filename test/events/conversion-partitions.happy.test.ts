import t from 'tap';
import postgres from 'postgres';
import { newId } from '@platform/shared/ids';
import { ensurePartitions, periodsFrom } from '@platform/shared/partitions';
import {
  conversionEventPartitions,
  findEventsByKeys,
  insertEventsWithOutbox,
} from '@platform/events/queries/conversion-events';
import { explainingConnection, purchase } from '../helpers/plans.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * conversion_events is partitioned by month (migration 041); an event's key is taken once, ever, in the unpartitioned
 * conversion_event_keys (039). Here the old rows' partition is taken away so that real months surround now: three
 * back, this one, two ahead; the keys of every month hold, and each event is read from its month alone.
 */
const db = await createTestDatabase(t);
const { sql } = db;
await sql`alter table conversion_events detach partition conversion_events_legacy`;
await sql`drop table conversion_events_legacy`;
const now = new Date();
const months = periodsFrom(
  conversionEventPartitions,
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 3)),
  6,
);
await ensurePartitions(sql, { ...conversionEventPartitions, ahead: 5 }, months[0]!.from);
const names = months.map((m) => m.name);
const merchantId = newId('mer');
await sql`insert into merchants (id, name, plan) values (${merchantId}, 'Partitions', 'growth')`;

const event = (externalId: string, amount?: string) => purchase(merchantId, externalId, amount);
const keyOf = (externalId: string) => ({ merchantId, eventType: 'purchase', externalId });
/** Moves an event (its row and its key's instant) to the month `monthsAgo` before this one. */
const age = async (externalId: string, monthsAgo: number) => {
  const at = new Date(months[3 - monthsAgo]!.from.getTime() + 86_400_000);
  await sql.begin(async (tx) => {
    await tx`update conversion_events set created_at = ${at} where merchant_id = ${merchantId} and external_id = ${externalId}`;
    await tx`update conversion_event_keys set created_at = ${at} where merchant_id = ${merchantId} and external_id = ${externalId}`;
  });
};

t.test('one key sent at once from many connections: one event, one outbox row', async (t) => {
  const pools = Array.from({ length: 5 }, () => postgres(db.url, { max: 1, onnotice: () => {} }));
  t.teardown(() => Promise.all(pools.map((p) => p.end({ timeout: 1 }))));
  for (let k = 0; k < 10; k++) {
    const inserted = await Promise.all(pools.map((pool) => insertEventsWithOutbox(pool, [event(`race-${k}`)])));
    t.equal(inserted.flat().length, 1, `race-${k}: one insert won`);
  }
  const [counts] = await sql<{ events: number; keys: number; messages: number }[]>`
    select (select count(*)::int from conversion_events where external_id like 'race-%') as events,
           (select count(*)::int from conversion_event_keys where external_id like 'race-%') as keys,
           (select count(*)::int from outbox where type = 'conversion.recorded' and data ->> 'external_id' like 'race-%')
             as messages`;
  t.same(counts, { events: 10, keys: 10, messages: 10 });
});

t.test('a key recorded months ago is refused now, and its event read from its month', async (t) => {
  const [first] = await insertEventsWithOutbox(sql, [event('order-old', '25.00')]);
  t.ok(first, 'recorded');
  await age('order-old', 2);
  const [partition] = await sql<{ name: string }[]>`
    select tableoid::regclass::text as name from conversion_events where id = ${first!.id}`;
  t.equal(partition!.name, names[1], 'the row is in the month two back');
  t.same(await insertEventsWithOutbox(sql, [event('order-old', '99.00')]), [], 'the same key now: not inserted');
  const [stored] = await findEventsByKeys(sql, [keyOf('order-old')]);
  t.equal(stored?.id, first!.id, 'the stored event is the first');
  t.equal(stored?.amount, '25.00');
  const [count] = await sql<
    { n: number }[]
  >`select count(*)::int as n from conversion_events where external_id = 'order-old'`;
  t.equal(count!.n, 1, 'one event with the key');
});

t.test('the lookups read only the partitions that hold their rows', async (t) => {
  // 2,000 events in every past month and this one (their keys with them), then statistics.
  for (let ago = 3; ago >= 0; ago--) {
    const at = new Date(months[3 - ago]!.from.getTime() + 86_400_000);
    await sql`
      with made as (
        insert into conversion_event_keys (merchant_id, event_type, external_id, event_id, created_at)
        select ${merchantId}, 'purchase', 'm' || ${ago} || '-' || n, 'evt_m' || ${ago} || '_' || n, ${at}::timestamptz
        from generate_series(1, 2000) n
        returning *)
      insert into conversion_events (id, merchant_id, event_type, external_id, amount, currency, body_hash, created_at)
      select event_id, merchant_id, event_type, external_id, 1, 'USD', '\\x00', created_at from made`;
  }
  await sql`analyze conversion_events, conversion_event_keys`;
  const { sql: explained, plans } = await explainingConnection(t, db.url);
  const read = () => {
    const plan = plans();
    const scans = [...plan.matchAll(/Scan (?:using \S+ )?on (conversion_events_p\d+)[^\n]*/g)]
      .filter((m) => !m[0].includes('never executed'))
      .map((m) => m[1]!);
    return { plan, partitions: [...new Set(scans)].sort() };
  };

  const found = await findEventsByKeys(explained, [keyOf('m1-7'), keyOf('m1-8')]);
  t.equal(found.length, 2);
  const byKeys = read();
  t.same(byKeys.partitions, [names[2]], 'events found by key: read from their month only');
  t.match(byKeys.plan, /Index Scan using conversion_event_keys_pkey/, 'the keys by their primary key');
  t.match(byKeys.plan, /Index Scan using conversion_events_p\d+_id/, 'the events by their id');

  // A merchant's events over a month (the bench's count, an export): that month's partition only.
  const from = months[1]!.from;
  const to = months[1]!.to;
  const [month] = await explained<{ n: number }[]>`
    select count(*)::int as n from conversion_events
    where merchant_id = ${merchantId} and created_at >= ${from} and created_at < ${to}`;
  t.equal(month!.n, 2001, "the month's 2,000 and the event moved there above");
  const byMonth = read();
  t.same(byMonth.partitions, [names[1]], "a month's events: its partition only");

  // A lookup by id without a time (support's): each month's index on id.
  const id = found[0]!.id;
  const [byId] = await explained<{ id: string }[]>`
    select id from conversion_events where merchant_id = ${merchantId} and id = ${id}`;
  t.equal(byId?.id, id);
  const plan = read().plan;
  // The months ahead are empty, and may be read by a scan of their nothing.
  for (const name of names.slice(0, 4))
    t.match(plan, `Index Scan using ${name}_id on ${name}`, `${name}: by its index`);
});
