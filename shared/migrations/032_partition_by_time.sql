-- Partitioning by time, step 3 of 3: each table is renamed `{table}_legacy`, a partitioned table takes its name,
-- and the old table is attached as the partition of everything before the cut-over of step 1. Nothing is copied:
-- the CHECK validated in step 2 stands for the partition's bounds, and the indexes the parent declares match ones
-- the old table has (renamed out of the way), so the attach reads no row and builds no index. The exclusive lock on
-- the old table is held for this catalogue work only. Statements of replicas still running the previous version
-- name the table, not its oid, so they are planned again against the partitioned one and go on working.
-- Partitions after the cut-over are created ahead by the owning service (shared/src/partitions.ts).

create function pg_temp.cutoff_of(constraint_name text) returns text language sql as $$
  select (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1] from pg_constraint where conname = constraint_name
$$;

-- Webhook attempts (dispatcher), by day. The identity becomes a sequence the parent owns, started past the old ids:
-- PostgreSQL before 17 has no identity columns on partitioned tables. No primary key: the id is unique by its
-- sequence, and a key would have to include attempted_at.
alter table webhook_attempts rename to webhook_attempts_legacy;
alter table webhook_attempts_legacy rename constraint webhook_attempts_pkey to webhook_attempts_legacy_pkey;
alter index webhook_attempts_delivery rename to webhook_attempts_legacy_delivery;
alter table webhook_attempts_legacy alter column id drop identity;
create sequence webhook_attempts_id_seq;
select setval('webhook_attempts_id_seq', coalesce((select max(id) from webhook_attempts_legacy), 0) + 1, false);
create table webhook_attempts (
  id            bigint not null default nextval('webhook_attempts_id_seq'),
  delivery_id   text not null references webhook_deliveries (id) on delete cascade,
  attempted_at  timestamptz not null,
  status_code   integer,
  error         text,
  duration_ms   integer not null,
  response_body text not null default ''
) partition by range (attempted_at);
alter sequence webhook_attempts_id_seq owned by webhook_attempts.id;
create index webhook_attempts_delivery on webhook_attempts (delivery_id, id);
do $$ begin
  execute format('alter table webhook_attempts attach partition webhook_attempts_legacy for values from (minvalue) to (%L)',
    pg_temp.cutoff_of('webhook_attempts_before_partitioning'));
end $$;

-- Requests per key per UTC day (gateway), by month. The primary key includes the day already.
alter table api_key_usage_daily rename to api_key_usage_daily_legacy;
alter table api_key_usage_daily_legacy rename constraint api_key_usage_daily_pkey to api_key_usage_daily_legacy_pkey;
create table api_key_usage_daily (
  key_id   text not null references api_keys (id),
  day      date not null,
  requests bigint not null default 0,
  primary key (key_id, day)
) partition by range (day);
do $$ begin
  execute format('alter table api_key_usage_daily attach partition api_key_usage_daily_legacy for values from (minvalue) to (%L)',
    pg_temp.cutoff_of('api_key_usage_daily_before_partitioning'));
end $$;

-- Referral visits (events), by month. No primary key: the id is a fresh random id, and attribution's lookup by
-- (merchant, id) bounds created_at by the time the id carries, so each new partition gets a plain index on
-- (merchant_id, id) from the service; the old table keeps its unique one.
alter table visits rename to visits_legacy;
alter table visits_legacy rename constraint visits_pkey to visits_legacy_pkey;
alter index visits_merchant_id rename to visits_legacy_merchant_id;
alter index visits_created_at rename to visits_legacy_created_at;
create table visits (
  id           text not null,
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  ip_hash      text,
  user_agent   text,
  fingerprint  text,
  landing_url  text,
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  expires_at   timestamptz not null,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
) partition by range (created_at);
create index visits_created_at on visits (created_at);
do $$ begin
  execute format('alter table visits attach partition visits_legacy for values from (minvalue) to (%L)',
    pg_temp.cutoff_of('visits_before_partitioning'));
end $$;
