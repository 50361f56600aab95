-- Conversions by one dimension at a time (docs/ANALYTICS.md), the counterpart of migration 066's clicks: ranking a
-- merchant's coupons, event types, countries, referrers, landing pages or devices by conversions read every
-- analytics_conversions row of the range, and that rollup holds a row per affiliate × coupon × event type × country ×
-- referrer × landing page × device, currency and bucket, about a row per conversion when they are spread over many
-- affiliates. This holds one row per dimension, value, currency and UTC day: a range without an affiliate filter reads
-- its whole UTC days here and the partial days at its two ends from analytics_conversions, so the sums are exactly
-- the range's. Affiliates are not kept here: a value per affiliate and day is about a row per conversion again, and
-- analytics_conversions' index on (merchant_id, affiliate_id, bucket) serves one affiliate's traffic.
create table if not exists analytics_conversion_dimensions_daily (
  merchant_id text not null references merchants (id),
  dimension   text not null
    check (dimension in ('coupon', 'event_type', 'country', 'referrer', 'landing_page', 'device')),
  -- The UTC day's start.
  day         timestamptz not null,
  -- The value as analytics_conversions keeps it ('' for none).
  key         text not null,
  currency    text not null,
  conversions bigint not null,
  revenue     numeric not null,
  commissions numeric not null,
  -- The analytics_conversions rows behind this one whose commissions are not zero: ranking counts a value with
  -- commissions but no net conversions (a refunded order's) as the raw rows do, which a day's sum could cancel out.
  commissioned bigint not null,
  primary key (merchant_id, dimension, day, key, currency)
);

-- Kept by triggers on analytics_conversions, in the drain's transaction, for the reasons migration 066 gives for the
-- clicks': exact in the same commit, and counting what a replica of the previous version drains. An update adds what
-- the rows gained, their new values less their old (the drain's upsert only adds).
create or replace function analytics_conversion_dimensions_add() returns trigger language plpgsql as $$
declare
  -- The rows a statement changed, as what they add. An insert's trigger has no old rows (a transition table exists
  -- only where the trigger declares it), so the statement is put together for the operation.
  changed text := 'select merchant_id, bucket, coupon, event_type, country, referrer, landing_page, device, currency,
                          conversions, revenue, commissions, (commissions <> 0)::int as commissioned
                   from new_rows';
begin
  -- An upsert fires both the insert and the update triggers, whatever it did, and the drain upserts for every batch,
  -- clicks alone included: a statement that changed no row has nothing to add (and EXECUTE plans on every call).
  if not exists (select from new_rows) then
    return null;
  end if;
  if tg_op = 'UPDATE' then
    changed := changed || ' union all
                   select merchant_id, bucket, coupon, event_type, country, referrer, landing_page, device, currency,
                          -conversions, -revenue, -commissions, -(commissions <> 0)::int
                   from old_rows';
  end if;
  execute format($q$
    insert into analytics_conversion_dimensions_daily as r
      (merchant_id, dimension, day, key, currency, conversions, revenue, commissions, commissioned)
    select n.merchant_id, d.dimension, date_bin('1 day', n.bucket, timestamptz '2000-01-01T00:00:00Z'), d.key,
           n.currency, sum(n.conversions), sum(n.revenue), sum(n.commissions), sum(n.commissioned)
    from (%s) n
    cross join lateral (values ('coupon', n.coupon), ('event_type', n.event_type), ('country', n.country),
                               ('referrer', n.referrer), ('landing_page', n.landing_page), ('device', n.device))
      d (dimension, key)
    group by 1, 2, 3, 4, 5
    having sum(n.conversions) <> 0 or sum(n.revenue) <> 0 or sum(n.commissions) <> 0 or sum(n.commissioned) <> 0
    order by 1, 2, 3, 4, 5
    on conflict (merchant_id, dimension, day, key, currency) do update
      set conversions = r.conversions + excluded.conversions, revenue = r.revenue + excluded.revenue,
          commissions = r.commissions + excluded.commissions, commissioned = r.commissioned + excluded.commissioned
  $q$, changed);
  return null;
end $$;

-- The conversions already in analytics_conversions are copied in the transaction that creates the triggers, which
-- lock the table against the drain's writes until this commits: each is counted once, by the copy or by a trigger.
do $$ begin
  if not exists (select 1 from pg_trigger where tgname = 'analytics_conversion_dimensions_of_inserts') then
    create trigger analytics_conversion_dimensions_of_inserts after insert on analytics_conversions
      referencing new table as new_rows
      for each statement execute function analytics_conversion_dimensions_add();
    create trigger analytics_conversion_dimensions_of_updates after update on analytics_conversions
      referencing old table as old_rows new table as new_rows
      for each statement execute function analytics_conversion_dimensions_add();
    insert into analytics_conversion_dimensions_daily
      (merchant_id, dimension, day, key, currency, conversions, revenue, commissions, commissioned)
    select c.merchant_id, d.dimension, date_bin('1 day', c.bucket, timestamptz '2000-01-01T00:00:00Z'), d.key,
           c.currency, sum(c.conversions), sum(c.revenue), sum(c.commissions),
           count(*) filter (where c.commissions <> 0)
    from analytics_conversions c
    cross join lateral (values ('coupon', c.coupon), ('event_type', c.event_type), ('country', c.country),
                               ('referrer', c.referrer), ('landing_page', c.landing_page), ('device', c.device))
      d (dimension, key)
    group by 1, 2, 3, 4, 5
    having sum(c.conversions) <> 0 or sum(c.revenue) <> 0 or sum(c.commissions) <> 0
        or count(*) filter (where c.commissions <> 0) <> 0;
  end if;
end $$;
