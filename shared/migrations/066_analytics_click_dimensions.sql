-- Clicks by one click dimension at a time (docs/ANALYTICS.md): grouped by country, referrer, landing page or device
-- without an affiliate filter, GET /api/v1/analytics read every analytics_clicks row of the range, and that rollup
-- holds a row per affiliate × country × referrer × landing page × device and bucket, about a row per click when
-- traffic is spread over many affiliates. This holds one row per dimension, value and UTC day instead: a range reads
-- its whole UTC days here and the partial days at its two ends (less than a day each) from analytics_clicks, so the
-- sum is exactly the range's. A finer grain here would be read only at those ends, and would hold up to four rows
-- per click when traffic is thin, more than the raw clicks themselves.
-- Bots are not kept: the answer's clicks leave them out, and a value with bot clicks only is never ranked.
create table if not exists analytics_click_dimensions_daily (
  merchant_id text not null references merchants (id),
  dimension   text not null check (dimension in ('country', 'referrer', 'landing_page', 'device')),
  -- The UTC day's start.
  day         timestamptz not null,
  -- The value as analytics_clicks keeps it ('' for none).
  key         text not null,
  clicks      bigint not null,
  primary key (merchant_id, dimension, day, key)
);

-- Kept by triggers on analytics_clicks, in the transaction that writes it: the drain's, so the counts are exact
-- as the other rollups are (a fact counted in analytics_clicks is counted here, in the same commit). A trigger
-- rather than a step of the drain's statement: a replica of the previous version, still running during a rolling
-- update, drains with its own statement, which does not know this table; the trigger counts its clicks as well.
-- Statement-level with transition tables: one drain batch is one grouped upsert, a row per dimension, value and day
-- of the batch (few: a batch is seconds of traffic), not a statement per rollup row. An update adds what the rows
-- gained, their new clicks less their old (the drain's upsert only adds).
create or replace function analytics_click_dimensions_add() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into analytics_click_dimensions_daily as r (merchant_id, dimension, day, key, clicks)
    select n.merchant_id, d.dimension, date_bin('1 day', n.bucket, timestamptz '2000-01-01T00:00:00Z'), d.key,
           sum(n.clicks)
    from new_rows n
    cross join lateral (values ('country', n.country), ('referrer', n.referrer),
                               ('landing_page', n.landing_page), ('device', n.device)) d (dimension, key)
    group by 1, 2, 3, 4 having sum(n.clicks) <> 0
    order by 1, 2, 3, 4
    on conflict (merchant_id, dimension, day, key) do update set clicks = r.clicks + excluded.clicks;
  else
    with changed as (
      select merchant_id, bucket, country, referrer, landing_page, device, clicks from new_rows
      union all
      select merchant_id, bucket, country, referrer, landing_page, device, -clicks from old_rows
    )
    insert into analytics_click_dimensions_daily as r (merchant_id, dimension, day, key, clicks)
    select n.merchant_id, d.dimension, date_bin('1 day', n.bucket, timestamptz '2000-01-01T00:00:00Z'), d.key,
           sum(n.clicks)
    from changed n
    cross join lateral (values ('country', n.country), ('referrer', n.referrer),
                               ('landing_page', n.landing_page), ('device', n.device)) d (dimension, key)
    group by 1, 2, 3, 4 having sum(n.clicks) <> 0
    order by 1, 2, 3, 4
    on conflict (merchant_id, dimension, day, key) do update set clicks = r.clicks + excluded.clicks;
  end if;
  return null;
end $$;

-- The clicks already in analytics_clicks are copied in the transaction that creates the triggers: creating a
-- trigger locks analytics_clicks against writes, waiting for a drain in flight and holding the next ones until
-- this commits, so every click is counted once, by the copy or by a trigger. Recording is not held (it appends to
-- analytics_pending, which this does not lock); the drain waits for the copy and then catches up.
do $$ begin
  if not exists (select 1 from pg_trigger where tgname = 'analytics_click_dimensions_of_inserts') then
    create trigger analytics_click_dimensions_of_inserts after insert on analytics_clicks
      referencing new table as new_rows
      for each statement execute function analytics_click_dimensions_add();
    create trigger analytics_click_dimensions_of_updates after update on analytics_clicks
      referencing old table as old_rows new table as new_rows
      for each statement execute function analytics_click_dimensions_add();
    insert into analytics_click_dimensions_daily (merchant_id, dimension, day, key, clicks)
    select c.merchant_id, d.dimension, date_bin('1 day', c.bucket, timestamptz '2000-01-01T00:00:00Z'), d.key,
           sum(c.clicks)
    from analytics_clicks c
    cross join lateral (values ('country', c.country), ('referrer', c.referrer),
                               ('landing_page', c.landing_page), ('device', c.device)) d (dimension, key)
    group by 1, 2, 3, 4 having sum(c.clicks) <> 0;
  end if;
end $$;
