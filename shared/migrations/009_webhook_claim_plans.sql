-- Claims lease an endpoint's oldest due deliveries through webhook_deliveries_endpoint_next, in its order. With
-- webhook_deliveries_due (next_attempt_at alone) also there, the planner costs that small index below the wide
-- endpoint_next one (which carries every leased version of a busy queue until vacuum) and walks it instead: past
-- every other endpoint's due rows, then an incremental sort over runs of equal next_attempt_at (a fan-out batch
-- shares one now()). With 16 busy endpoints that made each refill claim read thousands of rows: Postgres spent
-- 660 µs per delivery recording and refilling, against 190 µs through endpoint_next. The sweeper's due-row scans
-- are served by endpoint_next too (the same rows, in endpoint order), so the index goes: two index entries fewer
-- per delivery (insert and lease).
drop index webhook_deliveries_due;
