-- Monthly renewals and downgrades at the end of the month (docs/BILLING.md). A billing account is `active` or
-- `past_due` (its renewal declined, since past_due_since); downgrade_to is a lower plan that applies when the paid
-- month ends. A renewal is a billing_charges row like an upgrade, its attempt named after the month and the day of
-- the try ('renewal:<period_end>:<day>'), so that every replica's renewal job claims each due renewal once.
alter table billing_accounts
  add column if not exists status text not null default 'active' check (status in ('active', 'past_due')),
  add column if not exists past_due_since timestamptz,
  add column if not exists downgrade_to text;
alter table billing_charges add column if not exists kind text not null default 'upgrade'
  check (kind in ('upgrade', 'renewal'));
create index if not exists billing_accounts_due on billing_accounts (period_end) where period_end is not null;
