-- Idempotency keys partitioned by day, step 1 of 3 (as 030 to 032 did for other tables; docs/SCALING.md,
-- "Partitioned tables"): a NOT VALID CHECK that its rows were claimed before a cut-over two days ahead (UTC), which
-- takes its lock only for a moment. Step 3 attaches the table as it is as the partition of the rows before it.
do $$ begin
  execute format('alter table idempotency_keys add constraint idempotency_keys_before_partitioning
    check (created_at < %L::timestamptz) not valid',
    (date_trunc('day', now() at time zone 'UTC') + interval '2 days') at time zone 'UTC');
end $$;
