-- Idempotency that holds across timeouts (issue 31).
--
-- assert_before_deadline: the last statement of a transaction that answers a caller with a deadline (shared/src/
-- deadline.ts). It runs on the server right before COMMIT, after every statement before it (lock waits included),
-- so a transaction still running when the gateway gave up (503) rolls back instead of committing unseen. The
-- database's clock is the one a commit happens by; the gateway's deadline is epoch milliseconds of its own clock
-- (hosts keep theirs NTP-synchronised). SQLSTATE 57014 (query_canceled), as a statement_timeout: nothing was done.
create or replace function assert_before_deadline(deadline_ms bigint) returns void
language plpgsql as $$
begin
  if clock_timestamp() > to_timestamp(deadline_ms / 1000.0) then
    raise exception 'the caller''s deadline passed before commit' using errcode = '57014';
  end if;
end
$$;

-- The reply of the service that did a keyed request's work, kept by that service on the key's row (shared/src/
-- idempotent-reply.ts) whatever became of the gateway that claimed it (it timed out, or stopped): the next request
-- with the key is answered from it instead of doing the work again. Its NATS headers (the RPC outcome) and its data,
-- encrypted as stored answers are. Cleared when the gateway stores the answer it made of it.
alter table idempotency_keys
  add column if not exists reply_headers jsonb,
  add column if not exists reply_body bytea;
