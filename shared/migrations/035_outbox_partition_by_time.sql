-- The outbox partitioned by day, step 3 of 3: the old table is attached, as it is, as the partition of the rows
-- written before the cut-over (see 032 for why this reads no row and builds no index). The seq identity becomes a
-- sequence the parent owns, started past the old seqs. The parent declares the relay's partial index only: a key
-- on seq or id would have to include created_at, and the old table's unique indexes on them could not serve as its
-- partitions' (each would be built under the lock). New partitions get plain indexes on seq and id from the
-- services (shared/src/outbox.ts); seq stays unique by its sequence, id by being a fresh random id.
alter table outbox rename to outbox_legacy;
alter table outbox_legacy rename constraint outbox_pkey to outbox_legacy_pkey;
alter table outbox_legacy rename constraint outbox_id_key to outbox_legacy_id_key;
alter index outbox_unpublished rename to outbox_legacy_unpublished;
alter table outbox_legacy alter column seq drop identity;
create sequence outbox_seq_seq;
select setval('outbox_seq_seq', coalesce((select max(seq) from outbox_legacy), 0) + 1, false);
create table outbox (
  seq              bigint not null default nextval('outbox_seq_seq'),
  id               text not null,
  merchant_id      text not null references merchants (id),
  type             text not null,
  data             jsonb not null,
  created_at       timestamptz not null default date_trunc('milliseconds', now()),
  published_at     timestamptz,
  trace_context    jsonb,
  set_aside_at     timestamptz,
  set_aside_reason text
) partition by range (created_at);
alter sequence outbox_seq_seq owned by outbox.seq;
create index outbox_unpublished on outbox (seq) where published_at is null;
do $$ begin
  execute format('alter table outbox attach partition outbox_legacy for values from (minvalue) to (%L)',
    (select (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1] from pg_constraint
     where conname = 'outbox_before_partitioning'));
end $$;
