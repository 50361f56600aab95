-- "Forgot password?" (services/gateway/src/dashboard/routes-password-reset.ts): a reset link's token, by its SHA-256
-- (the mailed link is the only copy): single use, 30 minutes; using one ends the user's other links too.
create table if not exists password_resets (
  token_hash  bytea primary key,
  user_id     text not null references dashboard_users (id) on delete cascade,
  merchant_id text not null references merchants (id) on delete cascade,
  expires_at  timestamptz not null,
  used_at     timestamptz,
  created_at  timestamptz not null default now()
);

-- The purge of links long past their half hour, and the user's links (ended together, deleted with the user).
create index if not exists password_resets_expires_at on password_resets (expires_at);
create index if not exists password_resets_user on password_resets (user_id);
