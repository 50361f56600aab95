-- A keyed request's work committed (issue 31): set by the service in the same transaction as its work (shared/src/
-- idempotent-reply.ts, markCommitted), before the reply it keeps on the row afterwards. A claim marked committed is
-- never taken over when its locked_until passes: the work was done, so a retry with the key must not do it again;
-- it waits for the kept reply (409 in progress meanwhile) instead.
alter table idempotency_keys add column if not exists committed_at timestamptz;
