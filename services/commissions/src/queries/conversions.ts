import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import { unnestColumns } from '@platform/shared/unnest';

/** A conversion's context as readConversionContexts returns it (one row per conversion). */
type ContextRow = {
  processed_before: boolean;
  affiliate: ConversionContext['affiliate'];
  refunded: boolean;
  by_visit: number;
  by_ip: number;
  ancestors: ConversionContext['ancestors'];
};

/** What processed_conversions records of a conversion event. */
export interface ConversionClaim {
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
}

/** A conversion for claimConversionsAndCountRevenue: its claim, and what it adds to its affiliate's revenue. */
export interface CountedClaim extends ConversionClaim {
  /** The amount this conversion adds to its affiliate's attributed revenue (what a refund takes back); null: none. */
  revenueCounted: string | null;
  /** Whether to find the highest tier the affiliate's new total reaches (only when revenue is counted). */
  tierLookup: boolean;
}

/** What claimConversionsAndCountRevenue answers for each conversion. */
export interface CountedResult {
  /** False when the event had been claimed already (by then, only a concurrent transaction could have). */
  claimed: boolean;
  /** The affiliate's attributed revenue in the conversion's currency after it; null when it counted none. */
  total: string | null;
  /** The highest tier that total reaches (ties: the higher rate, then the newer id), when looked up. */
  reached: { id: string; rate: string; threshold: string } | undefined;
}

const countedClaimColumns = unnestColumns({
  merchantId: (c: CountedClaim) => c.merchantId,
  eventId: (c: CountedClaim) => c.eventId,
  eventType: (c: CountedClaim) => c.eventType,
  externalId: (c: CountedClaim) => c.externalId,
  affiliateId: (c: CountedClaim) => c.affiliateId,
  amount: (c: CountedClaim) => c.amount,
  currency: (c: CountedClaim) => c.currency,
  visitId: (c: CountedClaim) => c.visitId,
  ipHash: (c: CountedClaim) => c.ipHash,
  occurredAt: (c: CountedClaim) => c.occurredAt.toISOString(),
  processedAt: (c: CountedClaim) => c.processedAt.toISOString(),
  revenueCounted: (c: CountedClaim) => c.revenueCounted,
  tierLookup: (c: CountedClaim) => String(c.tierLookup),
});

/**
 * Claims several conversions in one statement, each row written once with what it counted toward its affiliate's
 * revenue (revenue_counted: what a refund takes back), adds that to the affiliates' attributed revenue
 * (addAttributedRevenue) and, where asked, finds the highest tier each new total reaches. Only the rows this
 * statement claimed count, so a conversion claimed already adds nothing. Answers one result per conversion, in
 * order.
 *
 * Why one write: the rows used to be inserted by the context read and updated with revenue_counted afterwards, and
 * the update, never HOT on a table filled by inserts, wrote each row and its four index entries a second time.
 * No two conversions may be of the same affiliate and currency with revenue counted (one upsert cannot update a
 * row twice; lockKeysAndReadSettings serialises an affiliate's conversions anyway). Each row is scoped by its own
 * merchant.
 */
export async function claimConversionsAndCountRevenue(
  sql: Queryable,
  at: Date,
  claims: CountedClaim[],
): Promise<CountedResult[]> {
  if (claims.length === 0) return [];
  const c = countedClaimColumns(claims);
  const rows = await sql<
    {
      n: number;
      claimed: boolean;
      attributed_revenue: string | null;
      tier_id: string | null;
      tier_rate: string;
      tier_threshold: string;
    }[]
  >`
    with input as (
      select * from unnest(
        ${c.merchantId}::text[], ${c.eventId}::text[], ${c.eventType}::text[], ${c.externalId}::text[], ${c.affiliateId}::text[],
        ${c.amount}::text[], ${c.currency}::text[], ${c.visitId}::text[], ${c.ipHash}::text[], ${c.occurredAt}::timestamptz[],
        ${c.processedAt}::timestamptz[], ${c.revenueCounted}::text[], ${c.tierLookup}::text[]
      ) with ordinality as c(merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency, visit_id, ip_hash,
                             occurred_at, processed_at, revenue_counted, tier_lookup, n)
    ), claim as (
      insert into processed_conversions
        (merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency, visit_id, ip_hash, occurred_at,
         processed_at, revenue_counted)
      select merchant_id, event_id, event_type, external_id, affiliate_id, amount::numeric, currency, visit_id, ip_hash,
             occurred_at, processed_at, revenue_counted::numeric
      from input order by n
      on conflict (merchant_id, event_id) do nothing
      returning merchant_id, event_id, affiliate_id, currency, revenue_counted
    ), stats as (
      insert into affiliate_stats (merchant_id, affiliate_id, currency, attributed_revenue, conversions, updated_at)
      select merchant_id, affiliate_id, currency, revenue_counted, 1, ${at} from claim where revenue_counted is not null
      order by affiliate_id, currency
      on conflict (merchant_id, affiliate_id, currency) do update
        set attributed_revenue = affiliate_stats.attributed_revenue + excluded.attributed_revenue,
            conversions = affiliate_stats.conversions + excluded.conversions,
            updated_at = excluded.updated_at
      returning merchant_id, affiliate_id, currency, attributed_revenue
    )
    select c.n::int as n, k.event_id is not null as claimed, st.attributed_revenue,
           t.id as tier_id, t.rate as tier_rate, t.threshold as tier_threshold
    from input c
    left join claim k on k.merchant_id = c.merchant_id and k.event_id = c.event_id
    left join stats st on k.revenue_counted is not null
      and st.merchant_id = c.merchant_id and st.affiliate_id = c.affiliate_id and st.currency = c.currency
    left join lateral (
      select id, rate, threshold from tiers
      where c.tier_lookup::boolean and st.attributed_revenue is not null and merchant_id = c.merchant_id
        and threshold <= st.attributed_revenue
      order by threshold desc, rate desc, id desc
      limit 1
    ) t on true`;
  const results = new Array<CountedResult>(claims.length);
  for (const row of rows) {
    results[row.n - 1] = {
      claimed: row.claimed,
      total: row.attributed_revenue,
      reached:
        row.tier_id === null ? undefined : { id: row.tier_id, rate: row.tier_rate, threshold: row.tier_threshold },
    };
  }
  return results;
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
  /** The event was processed before: a redelivery (nothing else in the row means anything then). */
  processedBefore: boolean;
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

/** An attributed, non-refund conversion whose context readConversionContexts reads. */
export interface ContextLookup extends Pick<
  ConversionClaim,
  'merchantId' | 'eventId' | 'externalId' | 'visitId' | 'ipHash' | 'occurredAt'
> {
  affiliateId: string;
  customerEmail: string | null;
  fingerprint: string | null;
  maxLevels: number;
}

const contextColumns = unnestColumns({
  merchantId: (c: ContextLookup) => c.merchantId,
  eventId: (c: ContextLookup) => c.eventId,
  externalId: (c: ContextLookup) => c.externalId,
  affiliateId: (c: ContextLookup) => c.affiliateId,
  visitId: (c: ContextLookup) => c.visitId,
  ipHash: (c: ContextLookup) => c.ipHash,
  occurredAt: (c: ContextLookup) => c.occurredAt.toISOString(),
  customerEmail: (c: ContextLookup) => c.customerEmail,
  fingerprint: (c: ContextLookup) => c.fingerprint,
  maxLevels: (c: ContextLookup) => c.maxLevels,
});

/**
 * The busiest hour around the conversion for the visit or the IP hash of input row c: the largest count over the
 * windows [s, s + 1 h) with s between occurred_at - 1 h and occurred_at (ConversionContext.byVisit). The conversion
 * is not claimed yet, so it is counted explicitly.
 */
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
 * The contexts of attributed, non-refund conversions, in one statement; answers one per lookup, in order. Read under
 * the advisory locks of lockKeysAndReadSettings: whether the event was processed before (a committed claim, or one
 * made earlier in this transaction), the affiliate (locked FOR NO KEY UPDATE: enough to serialise tier promotions,
 * and it does not block the foreign-key checks of concurrent inserts of events and commissions for that
 * affiliate), whether the order was refunded, the velocity counts and the lineage. The statement sees none of the
 * batch's own claims (claimConversionsAndCountRevenue writes them afterwards), so the conversions must be
 * independent of one another: no two of them may share an order, a visit, an IP hash or an affiliate (what the
 * advisory locks serialise). Each row is read for its own merchant.
 */
export async function readConversionContexts(sql: Queryable, lookups: ContextLookup[]): Promise<ConversionContext[]> {
  if (lookups.length === 0) return [];
  const c = contextColumns(lookups);
  const rows = await sql<(ContextRow & { n: number })[]>`
    with recursive input as (
      select * from unnest(
        ${c.merchantId}::text[], ${c.eventId}::text[], ${c.externalId}::text[], ${c.affiliateId}::text[], ${c.visitId}::text[],
        ${c.ipHash}::text[], ${c.occurredAt}::timestamptz[], ${c.customerEmail}::text[], ${c.fingerprint}::text[],
        ${c.maxLevels}::int[]
      ) with ordinality as c(merchant_id, event_id, external_id, affiliate_id, visit_id, ip_hash, occurred_at, customer_email,
                             fingerprint, max_levels, n)
    ), affiliate as (
      select c.n, a.id, a.status, a.tier_id, t.rate::text as tier_rate, t.threshold::text as tier_threshold,
             a.custom_commission_rate::text as custom_commission_rate,
             coalesce(lower(a.email) = lower(c.customer_email), false) as email_matches,
             -- The visitor ids are the affiliate's own: fingerprints, and the visits of the browsers they opened
             -- their onboarding page in.
             coalesce(c.fingerprint = any(a.fingerprint_visitor_ids) or c.visit_id = any(a.fingerprint_visitor_ids),
                      false) as fingerprint_matches
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
           -- Probes of one row each, as scalar subqueries: an EXISTS may be planned as a hashed subplan, which reads
           -- the whole table on every call, and a generic plan made while the table was small keeps that choice.
           coalesce((
             select true from processed_conversions p where p.merchant_id = c.merchant_id and p.event_id = c.event_id
           ), false) as processed_before,
           (select row_to_json(x) from (
              select a.id, a.status, a.tier_id, a.tier_rate, a.tier_threshold, a.custom_commission_rate, a.email_matches,
                     a.fingerprint_matches
              from affiliate a where a.n = c.n) x) as affiliate,
           coalesce((
             select true from processed_conversions p
             where p.merchant_id = c.merchant_id and p.external_id = c.external_id and p.event_type = 'refund'
             limit 1
           ), false) as refunded,
           ${busiestHour(sql, 'visit_id')} as by_visit,
           ${busiestHour(sql, 'ip_hash')} as by_ip,
           (select coalesce(json_agg(json_build_object('id', l.id, 'status', l.status, 'level', l.level) order by l.level), '[]')
            from lineage l where l.n = c.n and l.level > 0) as ancestors
    from input c`;
  const contexts = new Array<ConversionContext>(lookups.length);
  for (const row of rows) {
    contexts[row.n - 1] = {
      processedBefore: row.processed_before,
      affiliate: row.affiliate,
      refunded: row.refunded,
      byVisit: row.by_visit,
      byIp: row.by_ip,
      ancestors: row.ancestors,
    };
  }
  return contexts;
}
