-- An outbox row the relay cannot publish (larger than NATS's max_payload or the stream's max_msg_size, or refused by
-- JetStream for good) is set aside rather than retried at the head of the outbox, where it held back every other
-- merchant's events: `set_aside_at` says when, `set_aside_reason` why. published_at stays null (it was never
-- published); the relay skips such rows, the reconcilers (webhook fan-out, conversions) process them from Postgres
-- once and move past them, and the purge deletes them after the retention like published rows.
-- Nullable columns without a default rewrite nothing: safe while other replicas run. No index: such rows are rare,
-- and the relay's partial index on unpublished rows (outbox_unpublished) still finds the rest in seq order.
alter table outbox add column if not exists set_aside_at timestamptz;
alter table outbox add column if not exists set_aside_reason text;
