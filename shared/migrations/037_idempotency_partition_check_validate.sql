-- Idempotency keys partitioned by day, step 2 of 3: the CHECK validated in a transaction of its own, under a lock
-- that lets every gateway go on claiming keys meanwhile.
alter table idempotency_keys validate constraint idempotency_keys_before_partitioning;
