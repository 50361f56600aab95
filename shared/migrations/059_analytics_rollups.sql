-- Analytics (GET /api/v1/analytics, docs/ANALYTICS.md): what a merchant reads back is summed from rollups, never
-- from years of raw clicks and events. Writers append one row per fact to analytics_pending in their own
-- transaction (migration 060's triggers); the events service's drain deletes a batch of pending rows and adds their
-- sums to the rollups in one transaction, so a fact is counted exactly once whatever crashes or runs twice.

-- Append-only: an insert takes no lock another writer waits for (no counter row on the recording path), and rows
-- live only until the next drain. Logged like every table: an unlogged one would lose facts at a crash.
create table if not exists analytics_pending (
  id            bigint generated always as identity primary key,
  merchant_id   text not null,
  kind          text not null check (kind in ('click', 'event', 'commission')),
  -- The fact's time: the visit's or event's created_at, or the commission's (decisions.md §15).
  at            timestamptz not null,
  affiliate_id  text,
  -- click: the visit's columns as recorded.
  landing_url   text,
  referrer_host text,
  country       text,
  device        text,
  -- event: as stored; commission: the event it came from (the drain reads its dimensions).
  event_id      text,
  event_type    text,
  coupon        text,
  visit_id      text,
  currency      text,
  -- event: its amount; commission: its amount, negative when it is voided (and positive again if un-voided).
  amount        numeric
);

-- Buckets are 15 minutes of UTC (date_bin from 2000-01-01T00:00Z): every UTC offset in use is a multiple of 15
-- minutes, so a day, week or month in any time zone is a whole number of buckets. '' stands for "none" in a
-- dimension (a unique key cannot hold nulls as equal on Postgres 15 without NULLS NOT DISTINCT everywhere).

-- Clicks by every click dimension. `clicks` leaves bots out; they are counted in `bot_clicks` only.
create table if not exists analytics_clicks (
  merchant_id  text not null references merchants (id),
  bucket       timestamptz not null,
  affiliate_id text not null,
  country      text not null,
  referrer     text not null,
  landing_page text not null,
  device       text not null,
  clicks       bigint not null default 0,
  bot_clicks   bigint not null default 0,
  primary key (merchant_id, bucket, affiliate_id, country, referrer, landing_page, device)
);
create index if not exists analytics_clicks_affiliate on analytics_clicks (merchant_id, affiliate_id, bucket);

-- Conversions, revenue and commissions by every dimension and currency; the click dimensions are those of the visit
-- that attributed the event ('' for a coupon's or an unattributed event). A commission counts under its own
-- affiliate (an upline's commission under the upline) and its event's other dimensions.
create table if not exists analytics_conversions (
  merchant_id  text not null references merchants (id),
  bucket       timestamptz not null,
  affiliate_id text not null,
  coupon       text not null,
  event_type   text not null,
  country      text not null,
  referrer     text not null,
  landing_page text not null,
  device       text not null,
  currency     text not null,
  conversions  bigint not null default 0,
  revenue      numeric not null default 0,
  commissions  numeric not null default 0,
  primary key (merchant_id, bucket, affiliate_id, coupon, event_type, country, referrer, landing_page, device, currency)
);
create index if not exists analytics_conversions_affiliate on analytics_conversions (merchant_id, affiliate_id, bucket);

-- The merchant's totals per bucket and currency ('' for clicks, which have none): the time series without an
-- affiliate filter, the page merchants open most, reads one row per bucket.
create table if not exists analytics_series (
  merchant_id text not null references merchants (id),
  bucket      timestamptz not null,
  currency    text not null,
  clicks      bigint not null default 0,
  bot_clicks  bigint not null default 0,
  conversions bigint not null default 0,
  revenue     numeric not null default 0,
  commissions numeric not null default 0,
  primary key (merchant_id, bucket, currency)
);
