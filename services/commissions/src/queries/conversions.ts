import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import { unnestColumns } from '@platform/shared/unnest';

/** A claimed conversion's context as the context statements return it (one row per conversion). */
type ContextRow = {
  claimed: boolean;
  affiliate: ConversionContext['affiliate'];
  refunded: boolean;
  by_visit: number;
  by_ip: number;
  ancestors: ConversionContext['ancestors'];
};

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
 * Serialises the transactions that touch the same keys (an order, a visit, an IP hash, an affiliate): a refund and
 * its order, or two conversions from one visitor, are then processed one after the other even by different
 * replicas, so each sees what the other committed. The keys are qualified by their merchant (`{merchant}:{key}`)
 * and locked with transaction-scoped advisory locks, one after the other in sorted order (unnest keeps the array's
 * order; the function is volatile, so each row's call is made), so two transactions cannot deadlock on them. The
 * same statement reads the settings (JSON text) of the given merchants: one round trip however many conversions a
 * transaction processes.
 */
export async function lockKeysAndReadSettings(
  sql: Queryable,
  qualifiedKeys: string[],
  merchantIds: string[],
): Promise<Map<string, string>> {
  const keys = [...new Set(qualifiedKeys)].sort();
  const rows = await sql<{ id: string | null; settings: string | null }[]>`
    select m.id, m.settings::text as settings
    from (
      select count(*) from (
        select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${keys}::text[]) with ordinality as l(k, n) order by n
      ) locked
    ) locks
    left join merchants m on m.id = any(${merchantIds}::text[])`;
  const settings = new Map<string, string>();
  for (const r of rows) if (r.id !== null) settings.set(r.id, r.settings!);
  return settings;
}

export interface ConversionContext {
  /** False when the event had been processed before (nothing else in the row means anything then). */
  claimed: boolean;
  /** The event's affiliate, locked (tier promotion writes it), with the identity fraud checks; null when none. */
  affiliate: {
    id: string;
    status: AffiliateStatus;
    tier_id: string | null;
    tier_rate: string | null;
    tier_threshold: string | null;
    custom_commission_rate: string | null;
    email_matches: boolean;
    fingerprint_matches: boolean;
  } | null;
  /** A refund of this order has already been processed (a refund can overtake its order on redelivery). */
  refunded: boolean;
  /**
   * The most conversions (refunds excluded, this one included) that the visit, and the IP hash, had within any one
   * hour that contains this one: the largest count over the windows [s, s + 1 h) with s between occurred_at - 1 h
   * and occurred_at, where it is enough to try the windows that start at a conversion. Counting windows around the
   * conversion, rather than only the hour before it, gives the same flags whatever order they are processed in.
   */
  byVisit: number;
  byIp: number;
  /** The affiliate's ancestors, parent first (level 1), at most `maxLevels` of them. */
  ancestors: { id: string; status: AffiliateStatus; level: number }[];
}

/**
 * Everything an attributed, non-refund conversion needs, in one statement: claims the event (claimConversion) and
 * reads, under the same advisory locks, what the old sequence of statements read after the claim: the affiliate
 * (locked FOR NO KEY UPDATE: enough to serialise tier promotions, and it does not block the foreign-key checks of
 * concurrent inserts of events and commissions for that affiliate), whether the order was refunded, the velocity
 * counts and the lineage. The statement does not see its own claim, so the velocity windows count this conversion
 * explicitly (it is a non-refund conversion of that visit and IP at occurred_at, as the claimed row says).
 */
export async function claimAndReadContext(
  sql: Queryable,
  c: Parameters<typeof claimConversion>[1] & {
    affiliateId: string;
    customerEmail: string | null;
    fingerprint: string | null;
    maxLevels: number;
  },
): Promise<ConversionContext> {
  const from = new Date(c.occurredAt.getTime() - 3600_000);
  const until = new Date(c.occurredAt.getTime() + 3600_000);
  const busiest = (column: 'visit_id' | 'ip_hash', value: string | null) =>
    value === null
      ? sql`0`
      : sql`(
          select coalesce(max(n), 0)::int from (
            select occurred_at, count(*) over (
              order by occurred_at range between current row and interval '59 minutes 59.999999 seconds' following
            ) as n
            from (
              select occurred_at from processed_conversions
              where merchant_id = ${c.merchantId} and ${sql(column)} = ${value} and event_type <> 'refund'
                and occurred_at > ${from} and occurred_at < ${until}
              union all select ${c.occurredAt}::timestamptz
            ) hits
          ) windows
          where occurred_at > ${from} and occurred_at <= ${c.occurredAt})`;
  const [row] = await sql<ContextRow[]>`
    with recursive claim as (
      insert into processed_conversions
        (merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency, visit_id, ip_hash, occurred_at, processed_at)
      values (${c.merchantId}, ${c.eventId}, ${c.eventType}, ${c.externalId}, ${c.affiliateId}, ${c.amount}, ${c.currency},
              ${c.visitId}, ${c.ipHash}, ${c.occurredAt}, ${c.processedAt})
      on conflict (merchant_id, event_id) do nothing
      returning 1
    ), affiliate as (
      select a.id, a.status, a.tier_id, t.rate::text as tier_rate, t.threshold::text as tier_threshold,
             a.custom_commission_rate::text as custom_commission_rate,
             coalesce(lower(a.email) = lower(${c.customerEmail}::text), false) as email_matches,
             coalesce(${c.fingerprint}::text = any(a.fingerprint_visitor_ids), false) as fingerprint_matches
      from affiliates a
      left join tiers t on t.merchant_id = a.merchant_id and t.id = a.tier_id
      where a.merchant_id = ${c.merchantId} and a.id = ${c.affiliateId}
      for no key update of a
    ), lineage (id, parent_id, status, level) as (
      select a.id, a.parent_id, a.status, 0 from affiliates a
      where ${c.maxLevels} > 0 and a.merchant_id = ${c.merchantId} and a.id = ${c.affiliateId}
      union all
      select p.id, p.parent_id, p.status, l.level + 1 from lineage l
      join affiliates p on p.merchant_id = ${c.merchantId} and p.id = l.parent_id
      where l.level < ${c.maxLevels}
    )
    select exists (select from claim) as claimed,
           (select row_to_json(affiliate) from affiliate) as affiliate,
           exists (
             select from processed_conversions
             where merchant_id = ${c.merchantId} and external_id = ${c.externalId} and event_type = 'refund'
           ) as refunded,
           ${busiest('visit_id', c.visitId)} as by_visit,
           ${busiest('ip_hash', c.ipHash)} as by_ip,
           (select coalesce(json_agg(json_build_object('id', id, 'status', status, 'level', level) order by level), '[]')
            from lineage where level > 0) as ancestors`;
  return {
    claimed: row!.claimed,
    affiliate: row!.affiliate,
    refunded: row!.refunded,
    byVisit: row!.by_visit,
    byIp: row!.by_ip,
    ancestors: row!.ancestors,
  };
}

/** A conversion for claimAndReadContexts: the claim's columns and what the context compares with. */
export type ContextLookup = Parameters<typeof claimAndReadContext>[1];

const contextColumns = unnestColumns({
  merchantId: (c: ContextLookup) => c.merchantId,
  eventId: (c: ContextLookup) => c.eventId,
  eventType: (c: ContextLookup) => c.eventType,
  externalId: (c: ContextLookup) => c.externalId,
  affiliateId: (c: ContextLookup) => c.affiliateId,
  amount: (c: ContextLookup) => c.amount,
  currency: (c: ContextLookup) => c.currency,
  visitId: (c: ContextLookup) => c.visitId,
  ipHash: (c: ContextLookup) => c.ipHash,
  occurredAt: (c: ContextLookup) => c.occurredAt.toISOString(),
  processedAt: (c: ContextLookup) => c.processedAt.toISOString(),
  customerEmail: (c: ContextLookup) => c.customerEmail,
  fingerprint: (c: ContextLookup) => c.fingerprint,
  maxLevels: (c: ContextLookup) => c.maxLevels,
});

/** The busiest hour around the conversion, as in claimAndReadContext, for the visit or the IP hash of input row c. */
function busiestHour(sql: Queryable, column: 'visit_id' | 'ip_hash') {
  return sql`
    case when c.${sql(column)} is null then 0 else (
      select coalesce(max(w.hits), 0)::int from (
        select h.occurred_at, count(*) over (
          order by h.occurred_at range between current row and interval '59 minutes 59.999999 seconds' following
        ) as hits
        from (
          select p.occurred_at from processed_conversions p
          where p.merchant_id = c.merchant_id and p.${sql(column)} = c.${sql(column)} and p.event_type <> 'refund'
            and p.occurred_at > c.occurred_at - interval '1 hour' and p.occurred_at < c.occurred_at + interval '1 hour'
          union all select c.occurred_at
        ) h
      ) w
      where w.occurred_at > c.occurred_at - interval '1 hour' and w.occurred_at <= c.occurred_at
    ) end`;
}

/**
 * claimAndReadContext for several conversions in one statement: one claim each, and each one's context read as
 * that function reads it; answers one context per lookup, in order. The statement sees none of its own claims, so
 * the conversions must be independent of one another: no two of them may share an order, a visit, an IP hash or an
 * affiliate (what the advisory locks of lockKeysAndReadSettings serialise). Each row is read for its own merchant.
 */
export async function claimAndReadContexts(sql: Queryable, lookups: ContextLookup[]): Promise<ConversionContext[]> {
  if (lookups.length === 0) return [];
  const c = contextColumns(lookups);
  const rows = await sql<(ContextRow & { n: number })[]>`
    with recursive input as (
      select * from unnest(
        ${c.merchantId}::text[], ${c.eventId}::text[], ${c.eventType}::text[], ${c.externalId}::text[], ${c.affiliateId}::text[],
        ${c.amount}::text[], ${c.currency}::text[], ${c.visitId}::text[], ${c.ipHash}::text[], ${c.occurredAt}::timestamptz[],
        ${c.processedAt}::timestamptz[], ${c.customerEmail}::text[], ${c.fingerprint}::text[], ${c.maxLevels}::int[]
      ) with ordinality as c(merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency, visit_id, ip_hash,
                             occurred_at, processed_at, customer_email, fingerprint, max_levels, n)
    ), claim as (
      insert into processed_conversions
        (merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency, visit_id, ip_hash, occurred_at, processed_at)
      select merchant_id, event_id, event_type, external_id, affiliate_id, amount::numeric, currency, visit_id, ip_hash,
             occurred_at, processed_at
      from input order by n
      on conflict (merchant_id, event_id) do nothing
      returning merchant_id, event_id
    ), affiliate as (
      select c.n, a.id, a.status, a.tier_id, t.rate::text as tier_rate, t.threshold::text as tier_threshold,
             a.custom_commission_rate::text as custom_commission_rate,
             coalesce(lower(a.email) = lower(c.customer_email), false) as email_matches,
             coalesce(c.fingerprint = any(a.fingerprint_visitor_ids), false) as fingerprint_matches
      from input c
      join affiliates a on a.merchant_id = c.merchant_id and a.id = c.affiliate_id
      left join tiers t on t.merchant_id = a.merchant_id and t.id = a.tier_id
      for no key update of a
    ), lineage (n, id, parent_id, status, level) as (
      select c.n, a.id, a.parent_id, a.status, 0 from input c
      join affiliates a on a.merchant_id = c.merchant_id and a.id = c.affiliate_id
      where c.max_levels > 0
      union all
      select l.n, p.id, p.parent_id, p.status, l.level + 1 from lineage l
      join input c on c.n = l.n
      join affiliates p on p.merchant_id = c.merchant_id and p.id = l.parent_id
      where l.level < c.max_levels
    )
    select c.n::int as n,
           exists (select from claim k where k.merchant_id = c.merchant_id and k.event_id = c.event_id) as claimed,
           (select row_to_json(x) from (
              select a.id, a.status, a.tier_id, a.tier_rate, a.tier_threshold, a.custom_commission_rate, a.email_matches,
                     a.fingerprint_matches
              from affiliate a where a.n = c.n) x) as affiliate,
           exists (
             select from processed_conversions p
             where p.merchant_id = c.merchant_id and p.external_id = c.external_id and p.event_type = 'refund'
           ) as refunded,
           ${busiestHour(sql, 'visit_id')} as by_visit,
           ${busiestHour(sql, 'ip_hash')} as by_ip,
           (select coalesce(json_agg(json_build_object('id', l.id, 'status', l.status, 'level', l.level) order by l.level), '[]')
            from lineage l where l.n = c.n and l.level > 0) as ancestors
    from input c`;
  const contexts: ConversionContext[] = new Array(lookups.length);
  for (const row of rows) {
    contexts[row.n - 1] = {
      claimed: row.claimed,
      affiliate: row.affiliate,
      refunded: row.refunded,
      byVisit: row.by_visit,
      byIp: row.by_ip,
      ancestors: row.ancestors,
    };
  }
  return contexts;
}
