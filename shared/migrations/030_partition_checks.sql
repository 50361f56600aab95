-- Partitioning by time, step 1 of 3 (docs/ARCHITECTURE.md, "Partitioned tables"): each table about to be partitioned
-- gets a CHECK that its rows are older than a cut-over instant, NOT VALID, which takes its lock only for a moment.
-- Step 3 attaches the table as it is, under a new partitioned parent, as the partition of everything before that
-- instant; a valid CHECK that implies the partition's bounds spares that step a scan under an exclusive lock.
-- The instant is two periods ahead (UTC), so that the rows written until step 3 runs still fall before it.
do $$
declare
  attempts_cutoff timestamptz := (date_trunc('day', now() at time zone 'UTC') + interval '2 days') at time zone 'UTC';
  month_cutoff date := (date_trunc('month', now() at time zone 'UTC') + interval '2 months')::date;
begin
  execute format('alter table webhook_attempts add constraint webhook_attempts_before_partitioning
    check (attempted_at < %L::timestamptz) not valid', attempts_cutoff);
  execute format('alter table api_key_usage_daily add constraint api_key_usage_daily_before_partitioning
    check (day < %L::date) not valid', month_cutoff);
  execute format('alter table visits add constraint visits_before_partitioning
    check (created_at < %L::timestamptz) not valid', month_cutoff::timestamp at time zone 'UTC');
end $$;
