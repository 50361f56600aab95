-- Idempotency-Key on the POSTs of both APIs (/api/v1 and /v1): the first request with a key claims its row, and the
-- answer it produced is stored for replay to the same key's later requests, for 24 hours from the claim.

create table idempotency_keys (
  owner        text not null,           -- the API key (svc_ or sk_) or dashboard user the key belongs to
  key          text not null,           -- the Idempotency-Key header, 1 to 255 characters
  fingerprint  bytea not null,          -- sha-256 of the method, path, context and canonical body of the first request
  request_id   text not null,           -- the request that claimed the key (its answer's Original-Request)
  created_at   timestamptz not null default now(),
  -- Until when the claiming request may still be running: past it, an unanswered claim is abandoned (its gateway
  -- stopped) and the next request with the same body takes the key over.
  locked_until timestamptz not null,
  status       smallint,                -- the stored answer, null while the first request runs
  headers      jsonb,
  body         bytea,
  primary key (owner, key)
);

-- The purge deletes by age.
create index idempotency_keys_created on idempotency_keys (created_at);
