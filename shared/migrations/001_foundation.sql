-- Merchants, their API keys with audit trail and usage, dashboard users, affiliates, tiers and the outbox.

create table merchants (
  id          text primary key,
  name        text not null,
  plan        text not null check (plan in ('free', 'starter', 'growth', 'scale', 'enterprise')),
  -- default_rate, hold_days, currency, attribution_window_days, level_rates, landing_url, tracking_host, fraud_action
  settings    jsonb not null default '{}'::jsonb,
  created_at  timestamptz not null default date_trunc('milliseconds', now()),
  updated_at  timestamptz not null default date_trunc('milliseconds', now())
);

create table api_keys (
  id                 text primary key,
  merchant_id        text not null references merchants (id),
  key_hash           bytea not null unique,         -- sha-256 of the whole key value; the value itself is never stored
  prefix             text not null,                  -- first characters, for display
  scopes             text[] not null check (scopes <@ array['read', 'write', '*']::text[] and cardinality(scopes) > 0),
  rate_limit_per_min integer not null default 600 check (rate_limit_per_min between 60 and 60000),
  created_at         timestamptz not null default date_trunc('milliseconds', now()),
  revoked_at         timestamptz,
  last_used_at       timestamptz
);
create index api_keys_merchant on api_keys (merchant_id, created_at desc);

create table api_key_audit (
  id          bigint generated always as identity primary key,
  key_id      text not null references api_keys (id),
  merchant_id text not null references merchants (id),
  action      text not null check (action in ('created', 'revoked', 'scopes_changed', 'rate_limit_changed')),
  detail      jsonb not null default '{}'::jsonb,
  at          timestamptz not null default now()
);
create index api_key_audit_key on api_key_audit (key_id, at desc);

-- Requests per key per UTC day, flushed by the gateways in batches.
create table api_key_usage_daily (
  key_id   text not null references api_keys (id),
  day      date not null,
  requests bigint not null default 0,
  primary key (key_id, day)
);

-- One row per key: a fixed one-minute window that starts at the key's first request after the previous one ended.
-- Every gateway replica increments the same row, so the limit holds across replicas.
create table api_rate_windows (
  key_id       text primary key,
  window_start timestamptz not null,
  count        integer not null
);

create table dashboard_users (
  id            text primary key,
  merchant_id   text not null references merchants (id),
  email         text not null,
  password_hash text not null,                       -- scrypt$N$r$p$salt$hash
  created_at    timestamptz not null default date_trunc('milliseconds', now())
);
create unique index dashboard_users_email on dashboard_users (lower(email));

create table tiers (
  id          text primary key,
  merchant_id text not null references merchants (id),
  name        text not null,
  rate        numeric(7, 6) not null check (rate >= 0 and rate <= 1),
  threshold   numeric(20, 4) not null check (threshold >= 0),  -- attributed revenue that promotes into this tier
  created_at  timestamptz not null default date_trunc('milliseconds', now())
);
create unique index tiers_merchant_id on tiers (merchant_id, id);

create table affiliates (
  id                        text primary key,
  merchant_id               text not null references merchants (id),
  slug                      text not null,
  email                     text not null,
  display_name              text not null,
  status                    text not null check (status in ('pending', 'approved', 'suspended')),
  tier_id                   text,
  parent_id                 text,
  lifetime_commissions_paid numeric(20, 4) not null default 0,
  custom_commission_rate    numeric(7, 6) check (custom_commission_rate >= 0 and custom_commission_rate <= 1),
  -- Vault references: never returned, never logged (output goes through an allowlist).
  tin_vault_id              text,
  fingerprint_visitor_ids   text[] not null default '{}',
  payout_details_vault_id   text,
  created_at                timestamptz not null default date_trunc('milliseconds', now()),
  updated_at                timestamptz not null default date_trunc('milliseconds', now()),
  foreign key (merchant_id, tier_id) references tiers (merchant_id, id),
  foreign key (parent_id) references affiliates (id)
);
create unique index affiliates_merchant_email on affiliates (merchant_id, lower(email));
create unique index affiliates_merchant_slug on affiliates (merchant_id, slug);
create unique index affiliates_merchant_id on affiliates (merchant_id, id);
create index affiliates_list on affiliates (merchant_id, created_at desc, id desc);
create index affiliates_list_status on affiliates (merchant_id, status, created_at desc, id desc);
create index affiliates_parent on affiliates (parent_id) where parent_id is not null;

-- Domain events written in the same transaction as the change they describe; relays publish them to JetStream.
create table outbox (
  seq          bigint generated always as identity primary key,
  id           text not null unique,                 -- msg_…: the envelope id, the Nats-Msg-Id and the webhook-id
  merchant_id  text not null references merchants (id),
  type         text not null,
  data         jsonb not null,
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  published_at timestamptz
);
create index outbox_unpublished on outbox (seq) where published_at is null;
