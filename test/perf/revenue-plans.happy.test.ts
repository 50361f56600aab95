import t from 'tap';
import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import {
  claimConversionsAndCountRevenue,
  readConversionContexts,
  type CountedClaim,
} from '@platform/commissions/queries/conversions';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createTier } from '../../scripts/admin/programme.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * processed_conversions grows with every conversion, and a prepared statement's generic plan (Postgres switches to
 * it after five runs) is kept until the table's statistics change: on a server without autovacuum, or between its
 * visits, it was made for a smaller table. Reading a batch's contexts and claiming it with the revenue it counts
 * must still find each conversion by primary key, not read every processed conversion of every merchant on every
 * call. The benchmark's database is in this state: analyzed after 1,000 conversions, then 20,000 more. The claim
 * writes each row once, with what it counted: no second version of it.
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

/** Claims of new conversions, the k-th of the k-th affiliate, each counting `counted` (null: none). */
const claimsOf = (count: number, counted: string | null): CountedClaim[] =>
  Array.from({ length: count }, (_, k) => {
    const eventId = newId('evt');
    return {
      merchantId,
      eventId,
      eventType: 'sale',
      externalId: `order-${eventId}`,
      affiliateId: affiliateIds[k]!,
      amount: '60.00',
      currency: 'USD',
      visitId: null,
      ipHash: null,
      occurredAt: new Date(),
      processedAt: new Date(),
      revenueCounted: counted,
      tierLookup: counted !== null,
    };
  });

/** This transaction's counts so far: rows read by sequential scans of processed_conversions, rows it updated. */
const tableCounts = async (tx: Queryable) => {
  const [row] = await tx<{ scanned: string; updated: string }[]>`
    select pg_stat_get_xact_tuples_returned('processed_conversions'::regclass)::text as scanned,
           pg_stat_get_xact_tuples_updated('processed_conversions'::regclass)::text as updated`;
  return { scanned: Number(row!.scanned), updated: Number(row!.updated) };
};

t.test('a batch is read and claimed by primary key under generic plans made when the table was small', async (t) => {
  // Statistics of a table of 1,000, and a connection that uses the generic plan as Postgres does after five runs.
  await processed(1000);
  await sql`analyze processed_conversions`;
  const conn = await sql.reserve();
  t.teardown(() => conn.release());
  await conn`set plan_cache_mode = force_generic_plan`;
  const at = new Date();
  const contextsOf = (claims: CountedClaim[]) =>
    readConversionContexts(
      conn,
      claims.map((c) => ({ ...c, affiliateId: c.affiliateId!, customerEmail: null, fingerprint: null, maxLevels: 0 })),
    );
  const first = claimsOf(5, '1.00');
  await contextsOf(first); // prepares both statements while the table has 1,000
  await claimConversionsAndCountRevenue(conn, at, first);

  await processed(5000);
  const batch = claimsOf(20, '60.00');
  await conn`begin`;
  const before = await tableCounts(conn);
  const contexts = await contextsOf(batch);
  const results = await claimConversionsAndCountRevenue(conn, at, batch);
  const after = await tableCounts(conn);
  await conn`commit`;
  t.ok(
    after.scanned - before.scanned < 100,
    `${after.scanned - before.scanned} rows read by sequential scans (the table has 6,025)`,
  );
  t.equal(after.updated - before.updated, 0, 'no row of processed_conversions was updated: each claim is written once');

  t.same(
    contexts.map((c) => c.processedBefore),
    Array(20).fill(false),
    'none of the batch was processed before',
  );
  t.same(
    results.map((r) => r.claimed),
    Array(20).fill(true),
    'every conversion of the batch is claimed',
  );
  const counted = await sql<{ event_id: string; revenue_counted: string }[]>`
    select event_id, revenue_counted::text from processed_conversions
    where merchant_id = ${merchantId} and event_id = any(${batch.map((c) => c.eventId)}::text[])`;
  t.same(
    counted.map((r) => r.revenue_counted),
    Array(20).fill('60.00'),
    'every conversion of the batch is marked counted',
  );
  // The first five affiliates were counted 1.00 before; 61.00 stays below the tier, 60.00 too.
  t.same(
    results.map((r) => r.total),
    [...Array(5).fill('61.00'), ...Array(15).fill('60.00')],
  );
  t.ok(
    results.every((r) => r.reached === undefined),
    'no affiliate reached the 100 threshold',
  );

  const again = claimsOf(2, '60.00');
  const reached = await claimConversionsAndCountRevenue(conn, at, again);
  t.same(
    reached.map((r) => [r.total, r.reached?.id]),
    [
      ['121.00', tier!['id']],
      ['121.00', tier!['id']],
    ],
    'the tier, once reached',
  );

  const [beforeRepeat] = await sql<{ total: string }[]>`
    select attributed_revenue::text as total from affiliate_stats where merchant_id = ${merchantId} and affiliate_id = ${affiliateIds[0]!}`;
  const repeat = await claimConversionsAndCountRevenue(conn, at, again.slice(0, 1));
  t.same(
    repeat,
    [{ claimed: false, total: null, reached: undefined }],
    'a conversion claimed before is not claimed again',
  );
  t.same(
    (await contextsOf(again.slice(0, 1))).map((c) => c.processedBefore),
    [true],
    'and its context says it was processed before',
  );
  const [afterRepeat] = await sql<{ total: string }[]>`
    select attributed_revenue::text as total from affiliate_stats where merchant_id = ${merchantId} and affiliate_id = ${affiliateIds[0]!}`;
  t.equal(afterRepeat!.total, beforeRepeat!.total, "and adds nothing to its affiliate's revenue");

  const uncounted = claimsOf(3, null);
  const quiet = await claimConversionsAndCountRevenue(conn, at, uncounted);
  t.same(
    quiet.map((r) => [r.claimed, r.total]),
    Array(3).fill([true, null]),
    'a conversion that counts no revenue is claimed and adds nothing',
  );
});
