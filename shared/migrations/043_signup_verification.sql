-- Sign-up (services/gateway/src/dashboard/routes-signup.ts): a merchant's owner who signed up has an address to verify
-- before the dashboard lets them change anything. Users made any other way (the operator's CLI, the dashboard's own
-- user management) are taken as verified: the column's default marks them so, including the rows already there
-- (now() is stable: no table rewrite), and a sign-up writes null explicitly.
alter table dashboard_users add column if not exists email_verified_at timestamptz default now();

-- A verification link's token, by its SHA-256 (the link is the only copy of the token): single use, 24 hours.
create table if not exists email_verifications (
  token_hash bytea primary key,
  user_id text not null references dashboard_users (id) on delete cascade,
  merchant_id text not null references merchants (id) on delete cascade,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);

-- The purge of links past their day, and the user's links (deleted with the user).
create index if not exists email_verifications_expires_at on email_verifications (expires_at);
create index if not exists email_verifications_user on email_verifications (user_id);
