-- The platform payment API (/v1): platform keys, connected accounts and their onboarding links, payment intents,
-- payouts, and the double-entry ledger behind balances. Every row carries livemode: test and live data never mix.

create table platform_keys (
  id                 text primary key,
  livemode           boolean not null,
  key_hash           bytea not null unique,          -- sha-256 of the whole key value; the value itself is never stored
  prefix             text not null,                  -- first characters, for display
  rate_limit_per_min integer not null default 600 check (rate_limit_per_min between 60 and 60000),
  created_at         timestamptz not null default date_trunc('milliseconds', now()),
  revoked_at         timestamptz
);

create table platform_key_audit (
  id     bigint generated always as identity primary key,
  key_id text not null references platform_keys (id),
  action text not null check (action in ('created', 'revoked')),
  detail jsonb not null default '{}'::jsonb,
  actor  text not null,
  at     timestamptz not null default now()
);
create index platform_key_audit_key on platform_key_audit (key_id, at desc);

create table payment_accounts (
  id                     text primary key,
  livemode               boolean not null,
  type                   text not null check (type in ('express', 'custom', 'standard')),
  country                text not null,
  email                  text,
  business_type          text,
  merchant_id            text references merchants (id),
  metadata               jsonb not null default '{}'::jsonb,
  default_currency       text not null,
  business_name          text,
  business_url           text,
  product_description    text,
  bank_account_encrypted text,                       -- routing, account number and holder, encrypted (crypto.ts)
  bank_last4             text,
  bank_routing_number    text,
  bank_holder_name       text,
  tos_accepted_at        timestamptz,
  created_at             timestamptz not null default date_trunc('milliseconds', now())
);
create index payment_accounts_list on payment_accounts (livemode, created_at desc, id desc);
create index payment_accounts_merchant on payment_accounts (merchant_id) where merchant_id is not null;

-- A single-use onboarding link: opened once (then further opens go to refresh_url), submitted once.
create table payment_account_links (
  token_hash   bytea primary key,
  account_id   text not null references payment_accounts (id),
  livemode     boolean not null,
  refresh_url  text not null,
  return_url   text not null,
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  expires_at   timestamptz not null,
  opened_at    timestamptz,
  submitted_at timestamptz
);
create index payment_account_links_account on payment_account_links (account_id);

create table payment_intents (
  id                   text primary key,
  livemode             boolean not null,
  account_id           text references payment_accounts (id),   -- null: the platform's own; else a Stripe-Account's
  amount               bigint not null check (amount > 0),
  amount_received      bigint not null default 0,
  currency             text not null,
  status               text not null check (status in ('requires_payment_method', 'requires_confirmation',
                         'requires_action', 'processing', 'requires_capture', 'canceled', 'succeeded')),
  payment_method       text,
  capture_method       text not null check (capture_method in ('automatic', 'automatic_async', 'manual')),
  transfer_destination text references payment_accounts (id),
  description          text,
  metadata             jsonb not null default '{}'::jsonb,
  last_payment_error   jsonb,
  cancellation_reason  text,
  canceled_at          timestamptz,
  client_secret        text not null,
  created_at           timestamptz not null default date_trunc('milliseconds', now())
);
create index payment_intents_list on payment_intents (livemode, account_id, created_at desc, id desc);

-- ---- the ledger ----------------------------------------------------------------------------------------------
-- A holder is the platform ('platform'), a connected account (acct_…), or an outside party ('external:…': the card
-- networks money comes from, the processor's fees, the banks payouts go to). Only outside parties may go negative.

create table ledger_balances (
  livemode boolean not null,
  holder   text not null,
  currency text not null,
  bucket   text not null check (bucket in ('available', 'pending')),
  amount   bigint not null default 0,
  primary key (livemode, holder, currency, bucket),
  constraint ledger_balance_not_negative check (amount >= 0 or holder like 'external:%')
);

create table ledger_movements (
  id         bigint generated always as identity primary key,
  livemode   boolean not null,
  kind       text not null check (kind in ('charge', 'availability', 'payout', 'payout_failure', 'transfer')),
  source     text not null,                          -- pi_…, po_…, txn_…: what moved the money
  created_at timestamptz not null default date_trunc('milliseconds', now())
);

create table ledger_entries (
  id          bigint generated always as identity primary key,
  movement_id bigint not null references ledger_movements (id),
  livemode    boolean not null,
  holder      text not null,
  currency    text not null,
  bucket      text not null check (bucket in ('available', 'pending')),
  amount      bigint not null check (amount <> 0)
);
create index ledger_entries_movement on ledger_entries (movement_id);

-- Every movement's entries sum to zero per currency, checked when its transaction commits.
create function ledger_movement_balanced() returns trigger language plpgsql as $$
begin
  if exists (select 1 from ledger_entries where movement_id = new.movement_id
             group by currency having sum(amount) <> 0) then
    raise exception 'ledger movement % is not balanced', new.movement_id using errcode = '23514';
  end if;
  return null;
end $$;
create constraint trigger ledger_entries_balanced after insert on ledger_entries
  deferrable initially deferred for each row execute function ledger_movement_balanced();

create table balance_transactions (
  id           text primary key,
  livemode     boolean not null,
  holder       text not null,
  movement_id  bigint not null references ledger_movements (id),
  type         text not null check (type in ('charge', 'payment', 'payout', 'payout_failure', 'transfer')),
  amount       bigint not null,
  fee          bigint not null default 0,
  net          bigint not null,
  currency     text not null,
  status       text not null check (status in ('pending', 'available')),
  available_on timestamptz not null,
  source       text not null,
  description  text,
  created_at   timestamptz not null default date_trunc('milliseconds', now())
);
create index balance_transactions_list on balance_transactions (livemode, holder, created_at desc, id desc);
create index balance_transactions_due on balance_transactions (available_on) where status = 'pending';

create table payment_payouts (
  id                   text primary key,
  livemode             boolean not null,
  holder               text not null,
  amount               bigint not null check (amount > 0),
  currency             text not null,
  status               text not null check (status in ('pending', 'in_transit', 'paid', 'failed', 'canceled')),
  description          text,
  metadata             jsonb not null default '{}'::jsonb,
  destination_last4    text,
  failure_code         text,
  failure_message      text,
  balance_transaction  text not null,
  failure_balance_transaction text,
  arrival_date         timestamptz not null,
  created_at           timestamptz not null default date_trunc('milliseconds', now()),
  status_changed_at    timestamptz not null default now()
);
create index payment_payouts_list on payment_payouts (livemode, holder, created_at desc, id desc);
create index payment_payouts_open on payment_payouts (status_changed_at) where status in ('pending', 'in_transit');
