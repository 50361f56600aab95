-- A click's `converted` (GET /api/v1/clicks) is the first conversion event its cookie was credited for: an index on
-- (merchant_id, visit_id) of the events credited by cookie, in each month of conversion_events. Chosen over a column
-- of visits set when an event is attributed: recording an event stays one insert into its own table (no write into
-- another partitioned table, no lock on the visit's row shared by concurrent events of one visitor), the events
-- recorded before this migration are answered without a backfill, and the index holds only cookie-credited events
-- (the partial predicate), a fraction of all. The lookup bounds created_at by the click's own, so only the months
-- since the click are read. New months get it from the events service (services/events/src/queries/
-- conversion-events.ts, conversionEventPartitions); the existing ones here, one at a time and the oldest first, for
-- the reason given in 057. GET /api/v1/events?affiliate_id= gets, likewise, an index on (merchant_id, affiliate_id,
-- created_at) of the attributed events.
do $$
declare
  part text;
begin
  for part in
    select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'conversion_events'::regclass order by c.relname
  loop
    execute format('create index if not exists %I on %I (merchant_id, visit_id) where attributed_by = ''cookie''',
      part || '_visit', part);
    execute format('create index if not exists %I on %I (merchant_id, affiliate_id, created_at) where affiliate_id is not null',
      part || '_affiliate', part);
  end loop;
end $$;
