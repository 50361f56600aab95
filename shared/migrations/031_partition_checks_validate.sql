-- Partitioning by time, step 2 of 3: the CHECKs are validated in a transaction of their own. VALIDATE scans each
-- table under a SHARE UPDATE EXCLUSIVE lock, which lets every replica go on reading and writing meanwhile.
alter table webhook_attempts validate constraint webhook_attempts_before_partitioning;
alter table api_key_usage_daily validate constraint api_key_usage_daily_before_partitioning;
alter table visits validate constraint visits_before_partitioning;
