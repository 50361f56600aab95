import type { Sql } from '@platform/shared/db';
import { ensurePartitions } from '@platform/shared/partitions';
import { conversionEventPartitions } from '@platform/events/queries/conversion-events';
import { visitPartitions } from '@platform/events/queries/visits';

/** Rows per INSERT … SELECT of the load: progress shows, and no statement runs for many minutes. */
const CHUNK = 1_000_000;
const DAY_MS = 86_400_000;
/** Two years of traffic. */
export const HISTORY_DAYS = 730;

const COUNTRIES = `array['US','GB','DE','FR','ES','IT','NL','SE','PL','BR','MX','CA','AU','JP','IN','KR','ZA','NG','TR','AR']`;

/**
 * The analytics benchmark's merchant at size: `clicks` visits and `conversions` conversion events spread evenly over
 * two years among every affiliate of the merchant, loaded with generate_series straight into the raw tables, and
 * their rollups computed from them by the same grouping the drain applies (so the rollups, with what the triggers
 * of migrations 066 and 068 add as the drain writes analytics_clicks and analytics_conversions, are what the drain
 * would have left). Triggers are off for the loading session (session_replication_role = replica): appending ten
 * million pending facts only to drain them again would measure the load, not the reads. One bot click in twenty,
 * one event in fifty in EUR, one in twenty a refund; commissions 10 % of each sale. Ends with VACUUM ANALYZE of what it
 * wrote, as autovacuum (off on the bench machine) would have done on a database that has been running.
 */
export async function loadAnalytics(
  sql: Sql,
  merchantId: string,
  opts: { clicks: number; conversions: number; log: (line: string) => void },
): Promise<void> {
  const { log } = opts;
  const now = Date.now();
  for (let at = now - HISTORY_DAYS * DAY_MS; at <= now; at += 28 * DAY_MS) {
    await ensurePartitions(sql, visitPartitions, new Date(at));
    await ensurePartitions(sql, conversionEventPartitions, new Date(at));
  }
  await sql.reserve().then(async (conn) => {
    try {
      await conn`set session_replication_role = replica`;
      await conn`set statement_timeout = 0`;
      await conn`create temporary table bench_affiliates as
        select row_number() over (order by id) as n, id from affiliates where merchant_id = ${merchantId}`;
      await conn`create index on bench_affiliates (n)`;
      const [{ count }] = (await conn`select count(*)::int as count from bench_affiliates`) as unknown as [
        { count: number },
      ];
      for (let from = 0; from < opts.clicks; from += CHUNK) {
        const to = Math.min(opts.clicks, from + CHUNK) - 1;
        await conn`
          insert into visits (id, merchant_id, affiliate_id, landing_url, referrer_host, country, device, created_at,
                              expires_at)
          select 'vis_bench' || lpad(g::text, 21, '0'), ${merchantId}, a.id,
                 'https://shop.example.com/p' || (g % 97) || '?via=bench', 'ref' || (g % 53) || '.example.org',
                 (${sql.unsafe(COUNTRIES)})[1 + g % 20],
                 case when g % 20 = 0 then 'bot' else (array['desktop','mobile','tablet'])[1 + g % 3] end,
                 now() - random() * make_interval(days => ${HISTORY_DAYS}), now()
          from generate_series(${from}::bigint, ${to}::bigint) g
          join bench_affiliates a on a.n = 1 + (g * 7919) % ${count}`;
        log(`analytics: ${to + 1} clicks loaded`);
      }
      await conn`
        insert into conversion_events (id, merchant_id, event_type, external_id, amount, currency, payload,
                                       affiliate_id, attributed_by, body_hash, created_at)
        select 'evt_bench' || lpad(g::text, 21, '0'), ${merchantId},
               case when g % 20 = 0 then 'refund' else 'purchase' end, 'order-' || g,
               (10 + g % 190)::numeric + 0.99, case when g % 50 = 0 then 'EUR' else 'USD' end, '{}', a.id, 'cookie',
               '\\x00', now() - random() * make_interval(days => ${HISTORY_DAYS})
        from generate_series(0::bigint, ${opts.conversions - 1}::bigint) g
        join bench_affiliates a on a.n = 1 + (g * 104729) % ${count}`;
      log(`analytics: ${opts.conversions} conversion events loaded; computing the rollups`);
      await conn`
        insert into analytics_clicks (merchant_id, bucket, affiliate_id, country, referrer, landing_page, device,
                                      clicks, bot_clicks)
        select merchant_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01Z'), affiliate_id,
               coalesce(country, ''), coalesce(referrer_host, ''),
               coalesce(split_part(split_part(landing_url, '#', 1), '?', 1), ''), coalesce(device, ''),
               count(*) filter (where device is distinct from 'bot'), count(*) filter (where device = 'bot')
        from visits where merchant_id = ${merchantId} group by 1, 2, 3, 4, 5, 6, 7`;
      await conn`
        insert into analytics_conversions (merchant_id, bucket, affiliate_id, coupon, event_type, country, referrer,
                                           landing_page, device, currency, conversions, revenue, commissions)
        select merchant_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01Z'), coalesce(affiliate_id, ''),
               '', event_type, '', '', '', '', currency, count(*) filter (where event_type <> 'refund'),
               sum(case when event_type = 'refund' then -amount else amount end),
               sum(case when event_type = 'refund' then 0 else round(amount / 10, 2) end)
        from conversion_events where merchant_id = ${merchantId} group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`;
      await conn`
        insert into analytics_series (merchant_id, bucket, currency, clicks, bot_clicks, conversions, revenue,
                                      commissions)
        select merchant_id, bucket, currency, sum(clicks), sum(bot_clicks), sum(conversions), sum(revenue),
               sum(commissions)
        from (
          select merchant_id, bucket, '' as currency, clicks, bot_clicks, 0 as conversions, 0 as revenue,
                 0 as commissions
          from analytics_clicks where merchant_id = ${merchantId}
          union all
          select merchant_id, bucket, currency, 0, 0, conversions, revenue, commissions
          from analytics_conversions where merchant_id = ${merchantId}
        ) f group by 1, 2, 3`;
      // What the triggers on analytics_clicks (migration 066) add as the drain writes it, in the order the drain
      // would have written them (time).
      await conn`
        insert into analytics_click_dimensions_daily (merchant_id, dimension, day, key, clicks)
        select c.merchant_id, d.dimension, date_bin('1 day', c.bucket, timestamptz '2000-01-01Z'), d.key,
               sum(c.clicks)
        from analytics_clicks c
        cross join lateral (values ('country', c.country), ('referrer', c.referrer),
                                   ('landing_page', c.landing_page), ('device', c.device)) d (dimension, key)
        where c.merchant_id = ${merchantId}
        group by 1, 2, 3, 4 having sum(c.clicks) <> 0 order by 3, 2, 4`;
      // And what those on analytics_conversions (migration 068) add.
      await conn`
        insert into analytics_conversion_dimensions_daily (merchant_id, dimension, day, key, currency, conversions,
                                                           revenue, commissions, commissioned)
        select c.merchant_id, d.dimension, date_bin('1 day', c.bucket, timestamptz '2000-01-01Z'), d.key, c.currency,
               sum(c.conversions), sum(c.revenue), sum(c.commissions), count(*) filter (where c.commissions <> 0)
        from analytics_conversions c
        cross join lateral (values ('coupon', c.coupon), ('event_type', c.event_type), ('country', c.country),
                                   ('referrer', c.referrer), ('landing_page', c.landing_page), ('device', c.device))
          d (dimension, key)
        where c.merchant_id = ${merchantId}
        group by 1, 2, 3, 4, 5 order by 3, 2, 4, 5`;
      log('analytics: rollups computed; vacuum analyze');
      await conn`vacuum analyze visits, conversion_events, analytics_clicks, analytics_conversions, analytics_series,
                 analytics_click_dimensions_daily, analytics_conversion_dimensions_daily`;
    } finally {
      conn.release();
    }
  });
}
