-- Settings → Team: invitations by e-mail (services/gateway/src/dashboard/routes-invitations.ts). An invitation names
-- the address and the role the member will have; its link's token is kept by its SHA-256 only (the mailed link is
-- the only copy), lives 7 days and is used once. Resending replaces the hash, so the link mailed before is dead.
-- Keyed with merchant_id first, as a table distributed by merchant would be (docs/SCALING.md); the link is found by
-- its token before the merchant is known, hence the unique index on the hash alone.
create table if not exists dashboard_invitations (
  merchant_id text not null references merchants (id) on delete cascade,
  id          text not null,
  email       text not null,
  role        text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  token_hash  bytea not null,
  -- Who invited, by id and e-mail with no foreign key (as the audit log): a removed inviter's invitations stay.
  invited_by_email text not null,
  created_at  timestamptz not null default now(),
  sent_at     timestamptz not null default now(),
  expires_at  timestamptz not null,
  accepted_at timestamptz,
  -- The user the acceptance made.
  user_id     text,
  revoked_at  timestamptz,
  primary key (merchant_id, id)
);

create unique index if not exists dashboard_invitations_token on dashboard_invitations (token_hash);
-- One open invitation per address in a merchant: two admins inviting the same address at once make one.
create unique index if not exists dashboard_invitations_open on dashboard_invitations (merchant_id, lower(email))
  where accepted_at is null and revoked_at is null;
-- The purge of invitations long ended (accepted, revoked or expired), as new ones are made.
create index if not exists dashboard_invitations_expires_at on dashboard_invitations (expires_at);
