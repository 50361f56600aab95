-- Conversion events partitioned by month, step 1 of 3 (as 030 to 032 did for other tables; docs/ARCHITECTURE.md,
-- "Partitioned tables"). An event's key (merchant, event_type, external_id) is accepted once, ever: money depends on
-- it. A partitioned table's unique keys must include its partition key, so the key moves to a narrow table of its
-- own, never partitioned, which the events service inserts into first (ON CONFLICT on the key) and then writes the
-- event's row into its month (services/events/src/queries/conversion-events.ts). The key row names the event and
-- the instant its row was written, so that the row is read from its month alone.
create table conversion_event_keys (
  merchant_id text not null references merchants (id),
  event_type  text not null,
  external_id text not null,
  event_id    text not null,
  created_at  timestamptz not null,
  primary key (merchant_id, event_type, external_id)
);

-- Until step 3, replicas of the previous version insert events without their keys: a trigger adds each one's key
-- in the same transaction (the old table's unique index has already refused a repeated key). Step 2 copies the keys
-- of the events from before this migration; a key both copy and trigger write is written once (ON CONFLICT).
create function conversion_event_key_of_row() returns trigger language plpgsql as $$
begin
  insert into conversion_event_keys (merchant_id, event_type, external_id, event_id, created_at)
  values (new.merchant_id, new.event_type, new.external_id, new.id, new.created_at)
  on conflict (merchant_id, event_type, external_id) do nothing;
  return null;
end $$;
create trigger conversion_event_keys_of_rows after insert on conversion_events
  for each row execute function conversion_event_key_of_row();

-- The NOT VALID CHECK that the events were written before a cut-over two months ahead (UTC): a moment's lock.
do $$ begin
  execute format('alter table conversion_events add constraint conversion_events_before_partitioning
    check (created_at < %L::timestamptz) not valid',
    (date_trunc('month', now() at time zone 'UTC') + interval '2 months') at time zone 'UTC');
end $$;
