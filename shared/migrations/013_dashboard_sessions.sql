-- The merchant dashboard: sign-in sessions shared by every gateway replica, failed sign-ins counted per account and
-- per client IP, and the acting user of key changes in the key audit log.

create table dashboard_sessions (
  token_hash  bytea primary key,                     -- sha-256 of the cookie value; the value itself is never stored
  user_id     text not null references dashboard_users (id) on delete cascade,
  merchant_id text not null references merchants (id),
  created_at  timestamptz not null default date_trunc('milliseconds', now()),
  expires_at  timestamptz not null
);
create index dashboard_sessions_expiry on dashboard_sessions (expires_at);

-- A fixed window per subject ('account:<lower(email)>' or 'ip:<address>') that opens at its first failure.
create table dashboard_signin_failures (
  subject      text primary key,
  window_start timestamptz not null,
  count        integer not null
);

-- Who changed the key: the dashboard user's e-mail, or 'operator' for the CLI (null on rows written before).
alter table api_key_audit add column actor text;
