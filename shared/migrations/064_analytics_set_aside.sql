-- A pending analytics fact the drain can never store (its upsert into a rollup fails with a data error: a value out
-- of range, a key a constraint refuses) is moved here, with the error, instead of failing every drain after it for
-- every merchant (docs/ANALYTICS.md). The rest of its batch is counted as usual. The columns are analytics_pending's,
-- copied as they were (id included, so the row can be traced and moved back once the cause is fixed), plus why.
-- A new table: nothing else is locked or rewritten; safe while other replicas run.
create table if not exists analytics_set_aside (
  id            bigint primary key,
  merchant_id   text not null,
  kind          text not null,
  at            timestamptz not null,
  affiliate_id  text,
  landing_url   text,
  referrer_host text,
  country       text,
  device        text,
  event_id      text,
  event_type    text,
  coupon        text,
  visit_id      text,
  currency      text,
  amount        numeric,
  -- The SQLSTATE and message of the error its upsert raised; never a row's values beyond the fact's own.
  error_code    text not null,
  error_message text not null,
  set_aside_at  timestamptz not null default now()
);
