-- The outbox partitioned by day, step 2 of 3: the CHECK validated under a lock that lets relays and writers go on.
alter table outbox validate constraint outbox_before_partitioning;
