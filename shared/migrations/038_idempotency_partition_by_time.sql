-- Idempotency keys partitioned by day, step 3 of 3: the old table is attached, as it is, as the partition of the
-- keys claimed before the cut-over (see 032 for why this reads no row and builds no index). Each day is dropped
-- whole once every key in it is past its 24 hours (services/gateway/src/idempotency/purge.ts).
--
-- The parent has no key on (owner, key): a partitioned table's unique constraints must include created_at. The
-- gateway claims a key under a transaction-scoped advisory lock on its (owner, key) instead, looks it up among the
-- days that can hold a live key, and inserts it only when absent (services/gateway/src/idempotency/queries.ts), so
-- that a key stays at most once per owner. New days get a plain index on (owner, key) from the gateway; the old table
-- keeps its primary key, which serves the same lookups.
--
-- A gateway of the previous version still running claims with INSERT … ON CONFLICT (owner, key), which now finds no
-- constraint to infer and fails (42P10): its keyed requests are answered 503 and do nothing until it is replaced,
-- rather than claiming a key without the lock and doing a request's work twice.
alter table idempotency_keys rename to idempotency_keys_legacy;
alter table idempotency_keys_legacy rename constraint idempotency_keys_pkey to idempotency_keys_legacy_pkey;
alter index idempotency_keys_created rename to idempotency_keys_legacy_created;
create table idempotency_keys (
  owner         text not null,
  key           text not null,
  fingerprint   bytea not null,
  request_id    text not null,
  created_at    timestamptz not null default now(),
  locked_until  timestamptz not null,
  status        smallint,
  headers       jsonb,
  body          bytea,
  reply_headers jsonb,
  reply_body    bytea,
  committed_at  timestamptz
) partition by range (created_at);
create index idempotency_keys_created on idempotency_keys (created_at);
do $$ begin
  execute format('alter table idempotency_keys attach partition idempotency_keys_legacy for values from (minvalue) to (%L)',
    (select (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1] from pg_constraint
     where conname = 'idempotency_keys_before_partitioning'));
end $$;
