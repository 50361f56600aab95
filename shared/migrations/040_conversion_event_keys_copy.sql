-- Conversion events partitioned by month, step 2 of 3, in a transaction of its own: the keys of the events written
-- before 039 are copied to conversion_event_keys, and the CHECK of 039 is validated. Neither blocks a reader or a
-- writer of conversion_events (the copy reads under ACCESS SHARE, VALIDATE scans under SHARE UPDATE EXCLUSIVE); an
-- event inserted meanwhile has its key from the trigger of 039. A key row is small (the key, an id and a time):
-- a scan of the table and an insert per event, once.
insert into conversion_event_keys (merchant_id, event_type, external_id, event_id, created_at)
select merchant_id, event_type, external_id, id, created_at from conversion_events
on conflict (merchant_id, event_type, external_id) do nothing;
alter table conversion_events validate constraint conversion_events_before_partitioning;
