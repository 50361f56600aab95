-- The outbox partitioned by day, step 1 of 3 (as 030 to 032 did for other tables; docs/ARCHITECTURE.md,
-- "Partitioned tables"): a NOT VALID CHECK that its rows were written before a cut-over two days ahead (UTC).
do $$ begin
  execute format('alter table outbox add constraint outbox_before_partitioning check (created_at < %L::timestamptz) not valid',
    (date_trunc('day', now() at time zone 'UTC') + interval '2 days') at time zone 'UTC');
end $$;
