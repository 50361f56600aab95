-- Outbound webhooks: endpoints, messages (the exact bytes every attempt sends), deliveries (one per message and
-- endpoint: the unit of retry, dead-letter and replay) and their attempts. Postgres is the source of truth for
-- delivery state; JetStream only carries events in and wake-up hints (see catalogue.ts, docs/WEBHOOKS.md).

create table webhook_endpoints (
  id                         text primary key,                       -- we_…
  merchant_id                text not null references merchants (id),
  url                        text not null,
  description                text not null default '',
  event_types                text[] not null check (cardinality(event_types) > 0),
  enabled                    boolean not null default true,
  disabled_reason            text check (disabled_reason in ('manual', 'gone', 'failure_threshold')),
  failure_threshold          integer not null default 15 check (failure_threshold between 1 and 100),
  consecutive_failures       integer not null default 0,
  last_success_at            timestamptz,
  -- AES-256-GCM (shared/src/crypto.ts); the plaintext whsec_… is returned on create and rotate only.
  secret_encrypted           text not null,
  -- After a rotation the old secret keeps signing (a second signature) until it expires.
  previous_secret_encrypted  text,
  previous_secret_expires_at timestamptz,
  created_at                 timestamptz not null default date_trunc('milliseconds', now()),
  updated_at                 timestamptz not null default date_trunc('milliseconds', now())
);
create index webhook_endpoints_list on webhook_endpoints (merchant_id, created_at desc, id desc);

create table webhook_messages (
  id          text primary key,                                    -- msg_…: the domain event id = webhook-id
  merchant_id text not null references merchants (id),
  type        text not null,
  body        text not null,                                       -- the envelope, serialised once
  created_at  timestamptz not null
);
create index webhook_messages_created on webhook_messages (created_at);

create table webhook_deliveries (
  id                 text primary key,                             -- dlv_…
  message_id         text not null references webhook_messages (id) on delete cascade,
  endpoint_id        text not null references webhook_endpoints (id) on delete cascade,
  merchant_id        text not null references merchants (id),
  status             text not null check (status in ('pending', 'retrying', 'succeeded', 'dead_lettered')),
  attempt_count      integer not null default 0,                   -- attempts in the current series (replay resets)
  next_attempt_at    timestamptz,                                  -- null once succeeded or dead-lettered
  locked_until       timestamptz,                                  -- lease of the replica attempting it now
  locked_by          text,
  queued_at          timestamptz,                                  -- when a wake-up hint was last published
  dead_letter_reason text,
  created_at         timestamptz not null default date_trunc('milliseconds', now()),
  updated_at         timestamptz not null default date_trunc('milliseconds', now()),
  constraint webhook_deliveries_message_endpoint unique (message_id, endpoint_id)
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status in ('pending', 'retrying');
create index webhook_deliveries_endpoint_due on webhook_deliveries (endpoint_id, next_attempt_at) where status in ('pending', 'retrying');
create index webhook_deliveries_log on webhook_deliveries (endpoint_id, created_at desc, id desc);
create index webhook_deliveries_leased on webhook_deliveries (endpoint_id) where locked_until is not null;

create table webhook_attempts (
  id            bigint generated always as identity primary key,
  delivery_id   text not null references webhook_deliveries (id) on delete cascade,
  attempted_at  timestamptz not null,
  status_code   integer,                                           -- null when no response arrived
  error         text,                                              -- timeout, network error, refused address
  duration_ms   integer not null,
  response_body text not null default ''                           -- the first KiB of the response
);
create index webhook_attempts_delivery on webhook_attempts (delivery_id, id);

-- The outbox reconciler's position: outbox rows up to this seq have been checked for a webhook message, so an event
-- that JetStream lost after the relay published it is still fanned out. Starts at the current end of the outbox.
create table webhook_fanout_watermark (
  singleton boolean primary key default true check (singleton),
  seq       bigint not null
);
insert into webhook_fanout_watermark (seq) select coalesce(max(seq), 0) from outbox;
