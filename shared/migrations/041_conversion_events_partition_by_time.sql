-- Conversion events partitioned by month, step 3 of 3: the old table is attached, as it is, as the partition of the
-- events written before the cut-over of 039 (see 032 for why this reads no row and builds no index). The parent has
-- no unique key: an event's key is conversion_event_keys' (039, complete since 040), and its id is a fresh random
-- id. New months get plain indexes on id and on (merchant_id, created_at) from the events service; the old table
-- keeps its unique ones, which serve the same lookups. Its foreign keys and CHECKs match the parent's (named as the
-- old table's are: an attach matches CHECKs by name), so the attach reuses them.
--
-- A replica of the previous version inserts with ON CONFLICT (merchant_id, event_type, external_id), which now
-- finds no constraint to infer and fails (42P10): its events are refused (500) until it is replaced, never recorded
-- without their key.
drop trigger conversion_event_keys_of_rows on conversion_events;
drop function conversion_event_key_of_row();
alter table conversion_events rename to conversion_events_legacy;
alter table conversion_events_legacy rename constraint conversion_events_pkey to conversion_events_legacy_pkey;
alter index conversion_events_idempotency rename to conversion_events_legacy_idempotency;
create table conversion_events (
  id            text not null,
  merchant_id   text not null constraint conversion_events_merchant_id_fkey references merchants (id),
  event_type    text not null constraint conversion_events_event_type_check check (event_type ~ '^[a-z][a-z0-9_.]{0,63}$'),
  external_id   text not null constraint conversion_events_external_id_check check (char_length(external_id) between 1 and 255),
  cookie_id     text,
  coupon        text,
  amount        numeric not null constraint conversion_events_amount_check check (amount >= 0 and amount < 1000000000000),
  currency      text not null constraint conversion_events_currency_check check (currency ~ '^[A-Z]{3}$'),
  payload       jsonb not null default '{}'::jsonb,
  affiliate_id  text,
  attributed_by text constraint conversion_events_attributed_by_check check (attributed_by in ('cookie', 'coupon')),
  visit_id      text,
  body_hash     bytea not null,
  created_at    timestamptz not null default date_trunc('milliseconds', now()),
  constraint conversion_events_check check ((affiliate_id is null) = (attributed_by is null)),
  constraint conversion_events_merchant_id_affiliate_id_fkey foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
) partition by range (created_at);
do $$ begin
  execute format('alter table conversion_events attach partition conversion_events_legacy for values from (minvalue) to (%L)',
    (select (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1] from pg_constraint
     where conname = 'conversion_events_before_partitioning'));
end $$;
