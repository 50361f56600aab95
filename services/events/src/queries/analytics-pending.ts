import type postgres from 'postgres';
import type { Queryable, Sql } from '@platform/shared/db';
import { isFactError, setFactAside, type FactSetAside } from './analytics-set-aside.ts';

/**
 * The most characters of each text dimension a rollup keeps. They are columns of the rollups' primary keys, and a
 * B-tree entry holds at most 2,704 bytes: a landing page of 2,000 CJK characters (6 KB of UTF-8, which /t/visit
 * takes) failed every drain after it, for every merchant. At four bytes a character these fit with room to spare;
 * landing pages that share their first 200 characters are counted as one.
 */
export const KEY_CHARS = { coupon: 64, eventType: 64, referrer: 253, landingPage: 200, device: 16 } as const;

/** Taken by the drain's transaction, so that one drain runs at a time across replicas (no two upserting one row). */
const DRAIN_LOCK = 0x616e616c; // 'anal'

/**
 * Facts taken one at a time by a transaction of the retry path: each has a savepoint, and a transaction with more
 * subtransactions than Postgres caches per backend (64) makes every other session's snapshot slower while it runs.
 */
const ONE_BY_ONE = 50;

/**
 * Moves up to `batch` pending facts (the oldest first) into the rollups, in one transaction: the DELETE … RETURNING
 * that takes them and the upserts that add their sums commit together, so a fact is counted once whether the
 * process crashes before, during or after, and a second replica never takes the same rows. Answers how many facts
 * were taken (counted, or set aside): 0 as well when another replica is draining right now (it will take these).
 *
 * That one statement is the only work of a drain while every fact can be stored. When it fails with an error of the
 * data (a fact a rollup refuses: `isFactError`), the same facts are taken again one at a time, each under a savepoint
 * (`moveOneByOne`): the one refused is set aside with its error (analytics-set-aside.ts), the others are counted, and
 * the drain goes on for every merchant. `setAside` hears of each once its transaction has committed.
 */
export async function drainAnalyticsPending(
  sql: Sql,
  batch: number,
  setAside?: (fact: FactSetAside) => void,
): Promise<number> {
  try {
    return await sql.begin(async (tx) => {
      if (!(await drainLock(tx))) return 0;
      return moveFacts(tx, tx`select id from analytics_pending order by id limit ${batch}`);
    });
  } catch (err) {
    if (!isFactError(err)) throw err;
  }
  let taken = 0;
  while (taken < batch) {
    const chunk = Math.min(ONE_BY_ONE, batch - taken);
    const { moved, aside } = await sql.begin((tx) => moveOneByOne(tx, chunk));
    taken += moved + aside.length;
    for (const fact of aside) setAside?.(fact);
    if (moved + aside.length < chunk) break;
  }
  return taken;
}

/**
 * The retry path: up to `limit` of the oldest pending facts, each moved by its own statement under a savepoint. One
 * whose statement fails with an error of its data is rolled back to its savepoint and set aside with the error; any
 * other error fails the whole transaction (nothing is set aside for a timeout), as it would the fast path.
 */
async function moveOneByOne(
  tx: postgres.TransactionSql,
  limit: number,
): Promise<{ moved: number; aside: FactSetAside[] }> {
  const result = { moved: 0, aside: [] as FactSetAside[] };
  if (!(await drainLock(tx))) return result;
  // Ordered by the bigint, not by the text it is read as ('143' sorts before '33').
  const ids = await tx<{ id: string }[]>`
    select p.id::text as id from analytics_pending p order by p.id limit ${limit}`;
  for (const { id } of ids) {
    try {
      result.moved += await tx.savepoint((sp) => moveFacts(sp, sp`select ${id}::bigint`));
    } catch (err) {
      if (!isFactError(err)) throw err;
      const fact = await setFactAside(tx, id, err);
      if (fact) result.aside.push(fact);
    }
  }
  return result;
}

/** Takes the drain's lock for this transaction; false when another replica's drain holds it. */
async function drainLock(tx: Queryable): Promise<boolean> {
  const [lock] = await tx<{ taken: boolean }[]>`select pg_try_advisory_xact_lock(${DRAIN_LOCK}) as taken`;
  return lock!.taken;
}

/**
 * Deletes the pending facts whose ids `which` selects and adds their sums to the rollups, in one statement; answers
 * how many it moved.
 *
 * Each fact gets its dimensions here, off the recording path: an event's click dimensions from the visit that
 * attributed it; a commission's from its event (processed_conversions names the event's instant, so the event is
 * read from its own month) and that event's visit. A visit is looked for only within the year before the fact (the
 * longest attribution window), which bounds the partitions read; a visit purged by retention leaves them ''.
 */
async function moveFacts(tx: Queryable, which: postgres.PendingQuery<postgres.Row[]>): Promise<number> {
  const [row] = await tx<{ moved: number }[]>`
    with claimed as (
      delete from analytics_pending where id in (${which})
      returning *
    ), enriched as (
      select c.*, pc.event_type as pc_event_type, e.coupon as e_coupon, v.country as v_country,
             v.referrer_host as v_referrer_host, v.landing_url as v_landing_url, v.device as v_device
      from claimed c
      left join processed_conversions pc
        on c.kind = 'commission' and pc.merchant_id = c.merchant_id and pc.event_id = c.event_id
      left join conversion_events e
        on c.kind = 'commission' and e.merchant_id = c.merchant_id and e.id = c.event_id and e.created_at = pc.occurred_at
      left join lateral (
        select v.country, v.referrer_host, v.landing_url, v.device from visits v
        where c.kind <> 'click' and v.merchant_id = c.merchant_id and v.id = coalesce(c.visit_id, pc.visit_id)
          and v.created_at between coalesce(pc.occurred_at, c.at) - interval '366 days'
                               and coalesce(pc.occurred_at, c.at) + interval '1 day'
        limit 1
      ) v on true
    ), facts as (
      select merchant_id, kind,
             date_bin('15 minutes', at, timestamptz '2000-01-01T00:00:00Z') as bucket,
             coalesce(affiliate_id, '') as affiliate_id,
             left(coalesce(upper(coalesce(coupon, e_coupon)), ''), ${KEY_CHARS.coupon}) as coupon,
             left(coalesce(event_type, pc_event_type, ''), ${KEY_CHARS.eventType}) as event_type,
             left(coalesce(country, v_country, ''), 2) as country,
             left(coalesce(referrer_host, v_referrer_host, ''), ${KEY_CHARS.referrer}) as referrer,
             left(coalesce(split_part(split_part(coalesce(landing_url, v_landing_url), '#', 1), '?', 1), ''),
                  ${KEY_CHARS.landingPage}) as landing_page,
             left(coalesce(device, v_device, ''), ${KEY_CHARS.device}) as device,
             coalesce(currency, '') as currency,
             case when kind = 'click' and device is distinct from 'bot' then 1 else 0 end as clicks,
             case when kind = 'click' and device = 'bot' then 1 else 0 end as bot_clicks,
             case when kind = 'event' and event_type <> 'refund' then 1 else 0 end as conversions,
             case when kind <> 'event' then 0 when event_type = 'refund' then -amount else amount end as revenue,
             case when kind = 'commission' then amount else 0 end as commissions
      from enriched
    ), click_sums as (
      insert into analytics_clicks as r
        (merchant_id, bucket, affiliate_id, country, referrer, landing_page, device, clicks, bot_clicks)
      select merchant_id, bucket, affiliate_id, country, referrer, landing_page, device, sum(clicks), sum(bot_clicks)
      from facts where kind = 'click'
      group by 1, 2, 3, 4, 5, 6, 7 order by 1, 2, 3, 4, 5, 6, 7
      on conflict (merchant_id, bucket, affiliate_id, country, referrer, landing_page, device) do update
        set clicks = r.clicks + excluded.clicks, bot_clicks = r.bot_clicks + excluded.bot_clicks
    ), conversion_sums as (
      insert into analytics_conversions as r
        (merchant_id, bucket, affiliate_id, coupon, event_type, country, referrer, landing_page, device, currency,
         conversions, revenue, commissions)
      select merchant_id, bucket, affiliate_id, coupon, event_type, country, referrer, landing_page, device, currency,
             sum(conversions), sum(revenue), sum(commissions)
      from facts where kind <> 'click'
      group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 order by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
      on conflict (merchant_id, bucket, affiliate_id, coupon, event_type, country, referrer, landing_page, device,
                   currency) do update
        set conversions = r.conversions + excluded.conversions, revenue = r.revenue + excluded.revenue,
            commissions = r.commissions + excluded.commissions
    ), series_sums as (
      insert into analytics_series as r
        (merchant_id, bucket, currency, clicks, bot_clicks, conversions, revenue, commissions)
      select merchant_id, bucket, currency, sum(clicks), sum(bot_clicks), sum(conversions), sum(revenue),
             sum(commissions)
      from facts group by 1, 2, 3 order by 1, 2, 3
      on conflict (merchant_id, bucket, currency) do update
        set clicks = r.clicks + excluded.clicks, bot_clicks = r.bot_clicks + excluded.bot_clicks,
            conversions = r.conversions + excluded.conversions, revenue = r.revenue + excluded.revenue,
            commissions = r.commissions + excluded.commissions
    )
    select count(*)::int as moved from claimed`;
  return row!.moved;
}
