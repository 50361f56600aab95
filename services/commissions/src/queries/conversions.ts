import type { Queryable } from '@platform/shared/db';

/**
 * Claims a conversion event for processing: true when this transaction recorded it, false when it was processed
 * before (a redelivery). A concurrent transaction claiming the same event waits here for the first to finish.
 */
export async function claimConversion(
  sql: Queryable,
  c: {
    merchantId: string;
    eventId: string;
    eventType: string;
    externalId: string;
    affiliateId: string | null;
    amount: string;
    currency: string;
    visitId: string | null;
    ipHash: string | null;
    occurredAt: Date;
    processedAt: Date;
  },
): Promise<boolean> {
  const rows = await sql`
    insert into processed_conversions
      (merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency, visit_id, ip_hash, occurred_at, processed_at)
    values (${c.merchantId}, ${c.eventId}, ${c.eventType}, ${c.externalId}, ${c.affiliateId}, ${c.amount}, ${c.currency},
            ${c.visitId}, ${c.ipHash}, ${c.occurredAt}, ${c.processedAt})
    on conflict (merchant_id, event_id) do nothing
    returning 1`;
  return rows.length === 1;
}

export async function markRevenueCounted(sql: Queryable, merchantId: string, eventId: string, amount: string): Promise<void> {
  await sql`update processed_conversions set revenue_counted = ${amount} where merchant_id = ${merchantId} and event_id = ${eventId}`;
}

/** Whether a refund of this order has already been processed (a refund can overtake its order on redelivery). */
export async function orderRefunded(sql: Queryable, merchantId: string, externalId: string): Promise<boolean> {
  const [row] = await sql`
    select 1 from processed_conversions
    where merchant_id = ${merchantId} and external_id = ${externalId} and event_type = 'refund'
    limit 1`;
  return row !== undefined;
}

/**
 * Takes the order's counted revenue back (once): marks its conversions reversed and returns what each had added.
 */
export async function reverseOrderRevenue(
  sql: Queryable,
  merchantId: string,
  externalId: string,
): Promise<{ affiliate_id: string; currency: string; revenue_counted: string }[]> {
  return sql<{ affiliate_id: string; currency: string; revenue_counted: string }[]>`
    update processed_conversions set revenue_reversed = true
    where merchant_id = ${merchantId} and external_id = ${externalId} and event_type <> 'refund'
      and revenue_counted is not null and not revenue_reversed
    returning affiliate_id, currency, revenue_counted`;
}

/**
 * The most conversions (refunds excluded, this one included) that the visit, and the IP hash, had within any one
 * hour that contains `at`: the largest count over the windows [s, s + 1 h) with s between `at` - 1 h and `at`,
 * where it is enough to try the windows that start at a conversion. Counting windows around the conversion,
 * rather than only the hour before it, gives the same flags whatever order the conversions are processed in.
 */
export async function busiestHour(
  sql: Queryable,
  merchantId: string,
  at: Date,
  keys: { visitId: string | null; ipHash: string | null },
): Promise<{ byVisit: number; byIp: number }> {
  const from = new Date(at.getTime() - 3600_000);
  const until = new Date(at.getTime() + 3600_000);
  const count = async (column: 'visit_id' | 'ip_hash', value: string | null): Promise<number> => {
    if (value === null) return 0;
    const [row] = await sql<{ n: number }[]>`
      select coalesce(max(n), 0)::int as n from (
        select occurred_at, count(*) over (
          order by occurred_at range between current row and interval '59 minutes 59.999999 seconds' following
        ) as n
        from processed_conversions
        where merchant_id = ${merchantId} and ${sql(column)} = ${value} and event_type <> 'refund'
          and occurred_at > ${from} and occurred_at < ${until}
      ) windows
      where occurred_at > ${from} and occurred_at <= ${at}`;
    return row!.n;
  };
  return { byVisit: await count('visit_id', keys.visitId), byIp: await count('ip_hash', keys.ipHash) };
}

/**
 * Serialises the transactions that touch the same keys (an order, a visit, an IP hash): a refund and its order, or
 * two conversions from one visitor, are then processed one after the other even by different replicas, so each
 * sees what the other committed. Locks are taken in sorted order, so two transactions cannot deadlock on them.
 */
export async function lockKeys(sql: Queryable, merchantId: string, keys: string[]): Promise<void> {
  for (const key of [...new Set(keys)].sort()) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`${merchantId}:${key}`}, 0))`;
  }
}
