-- The sweeper counts, per endpoint, the deliveries hinted recently and not yet claimed (claiming clears queued_at,
-- so this index stays small). Without it that count read every active delivery of an endpoint with a backlog.
create index webhook_deliveries_hinted on webhook_deliveries (endpoint_id, queued_at)
  where status in ('pending', 'retrying') and queued_at is not null;
