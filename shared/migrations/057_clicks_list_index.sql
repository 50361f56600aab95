-- GET /api/v1/clicks reads a merchant's visits newest first, by (created_at, id), from a cursor and between
-- created_after and created_before, and with affiliate_id one affiliate's. Each month of visits gets an index on
-- (merchant_id, created_at, id) and one on (merchant_id, affiliate_id, created_at, id), so a page is an ordered scan
-- of the months it spans that stops at the page's end, also for an affiliate with a small share of a large
-- merchant's clicks (walking the merchant's index for it would read rows by the million to fill a page). New months get it from the events service
-- (services/events/src/queries/visits.ts, visitPartitions), which makes each partition's indexes; the months that
-- exist get it here, the same way, one partition at a time: an index declared on the parent would be built under a
-- lock on the parent that holds back every click being recorded until all months are done. The months are taken in
-- name order, the oldest first (the legacy partition's name sorts before the months'), so that the current month,
-- the one being written, is locked last and only for its own build until this transaction commits. IF NOT EXISTS
-- lets a partition the service made meanwhile, already indexed, be skipped.
do $$
declare
  part text;
begin
  for part in
    select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'visits'::regclass order by c.relname
  loop
    execute format('create index if not exists %I on %I (merchant_id, created_at, id)', part || '_merchant_created', part);
    execute format('create index if not exists %I on %I (merchant_id, affiliate_id, created_at, id)',
      part || '_affiliate_created', part);
  end loop;
end $$;
