import t from 'tap';
import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { countConversionsRevenue } from '@platform/commissions/queries/stats';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createTier } from '../../scripts/admin/programme.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * processed_conversions grows with every conversion, and a prepared statement's generic plan (Postgres switches to
 * it after five runs) is kept until the table's statistics change: on a server without autovacuum, or between its
 * visits, it was made for a smaller table. Counting the revenue of a batch must still find each conversion by
 * primary key, not read every processed conversion of every merchant on every call. The benchmark's database is in
 * this state: analyzed after 1,000 conversions, then 20,000 more.
 */
const { sql } = await createTestDatabase(t);
await sql`alter table processed_conversions set (autovacuum_enabled = false)`;
const merchantId = (await createMerchant(sql, 'Revenue Plans', 'growth'))!['id'] as string;
const tier = await createTier(sql, merchantId, { name: 'Gold', rate: '0.2', threshold: '100' });

const affiliateIds = Array.from({ length: 20 }, () => newId('aff'));
await sql`
  insert into affiliates (id, merchant_id, slug, email, display_name, status, created_at, updated_at)
  select a.id, ${merchantId}, 'plans-' || a.n, 'plans.' || a.n || '@example.com', 'Plans ' || a.n, 'approved', now(), now()
  from unnest(${affiliateIds}::text[]) with ordinality as a(id, n)`;

/** `count` processed conversions, spread over the affiliates; their event ids. */
async function processed(count: number): Promise<string[]> {
  const events = Array.from({ length: count }, () => newId('evt'));
  await sql`
    insert into processed_conversions (merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency,
                                       occurred_at, processed_at)
    select ${merchantId}, e.id, 'sale', 'order-' || e.id, (${affiliateIds}::text[])[1 + e.n % 20], 60, 'USD', now(), now()
    from unnest(${events}::text[]) with ordinality as e(id, n)`;
  return events;
}

/** Rows of processed_conversions read by sequential scans in this transaction so far. */
const scannedRows = async (tx: Queryable) =>
  Number((await tx<{ n: string }[]>`select pg_stat_get_xact_tuples_returned('processed_conversions'::regclass)::text as n`)[0]!.n);

t.test('a batch is counted by primary key under a generic plan made when the table was small', async (t) => {
  // Statistics of a table of 1,000, and a connection that uses the generic plan as Postgres does after five runs.
  await processed(995);
  await sql`analyze processed_conversions`;
  const conn = await sql.reserve();
  t.teardown(() => conn.release());
  await conn`set plan_cache_mode = force_generic_plan`;
  const count = (events: string[], amount: string) =>
    countConversionsRevenue(
      conn,
      new Date(),
      events.map((eventId, k) => ({ merchantId, affiliateId: affiliateIds[k]!, eventId, currency: 'USD', amount, tierLookup: true })),
    );
  await count(await processed(5), '1.00'); // prepares the statement while the table has 1,000

  await processed(5000);
  const batch = await processed(20);
  await conn`begin`;
  const before = await scannedRows(conn);
  const results = await count(batch, '60.00');
  const scanned = (await scannedRows(conn)) - before;
  await conn`commit`;
  t.ok(scanned < 100, `${scanned} rows read by sequential scans (the table has 6,020)`);

  t.equal(results.length, 20);
  const counted = await sql<{ event_id: string; revenue_counted: string }[]>`
    select event_id, revenue_counted::text from processed_conversions
    where merchant_id = ${merchantId} and event_id = any(${batch}::text[])`;
  t.same(
    counted.map((r) => r.revenue_counted),
    Array(20).fill('60.00'),
    'every conversion of the batch is marked counted',
  );
  // The first five affiliates were counted 1.00 before; 61.00 stays below the tier, 60.00 too.
  t.same(results.map((r) => r.total), [...Array(5).fill('61.00'), ...Array(15).fill('60.00')]);
  t.ok(results.every((r) => r.reached === undefined), 'no affiliate reached the 100 threshold');
  const again = await count(batch.slice(0, 2), '60.00');
  t.same(again.map((r) => [r.total, r.reached?.id]), [['121.00', tier!['id']], ['121.00', tier!['id']]], 'the tier, once reached');
});
