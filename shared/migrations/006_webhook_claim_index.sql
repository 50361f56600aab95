-- Claims lease an endpoint's oldest due deliveries, `order by next_attempt_at, id limit <room>`, several endpoints in
-- one statement (a lateral subquery per endpoint, whose limit the planner cannot know). With only
-- (endpoint_id, next_attempt_at) the planner may walk webhook_deliveries_due instead, past every other endpoint's due
-- rows (a failing endpoint's backlog of 50,000), or sort all of this endpoint's due rows. With id in the key this
-- index alone gives the claim's order, so the scan stops after <room> rows. It serves everything the old
-- (endpoint_id, next_attempt_at) index did, which goes: one index less to maintain on every delivery write.
create index webhook_deliveries_endpoint_next on webhook_deliveries (endpoint_id, next_attempt_at, id)
  where status in ('pending', 'retrying');
drop index webhook_deliveries_endpoint_due;
