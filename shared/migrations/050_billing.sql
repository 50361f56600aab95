-- Plans and billing (docs/BILLING.md). billing_accounts: a merchant's saved card (the payments service's payment
-- method and what may be shown of it, never the number) and its paid period. billing_charges: every upgrade attempt,
-- claimed (inserted) before its charge is asked of the payments service, so that a retry of the same attempt finds
-- its claim and replays or resumes it instead of charging again; at most one attempt of a merchant is in flight.
-- Keyed with merchant_id first, as tables distributed by merchant are (docs/SCALING.md).
create table if not exists billing_accounts (
  merchant_id    text primary key references merchants (id),
  payment_method text,
  card_brand     text,
  card_last4     text check (card_last4 ~ '^[0-9]{4}$'),
  period_start   timestamptz,
  period_end     timestamptz,
  updated_at     timestamptz not null default date_trunc('milliseconds', now()),
  check ((period_start is null) = (period_end is null) and (period_end is null or period_end > period_start))
);

create table if not exists billing_charges (
  merchant_id    text not null references merchants (id),
  id             text not null,
  attempt        text not null,
  from_plan      text not null,
  to_plan        text not null,
  amount         bigint not null check (amount >= 0),
  currency       text not null,
  -- claimed: the charge is being made; succeeded / declined: its outcome; requested: waiting for the operator (no
  -- processor for live payments), approved once the operator applied it.
  status         text not null check (status in ('claimed', 'succeeded', 'declined', 'requested', 'approved')),
  -- The card the attempt pays with (the payments service's payment method), kept for a resumed attempt and the receipt.
  payment_method text,
  card_brand     text,
  card_last4     text,
  payment_intent text,
  failure        text,
  leased_until   timestamptz not null default now(),
  created_at     timestamptz not null default date_trunc('milliseconds', now()),
  settled_at     timestamptz,
  primary key (merchant_id, id),
  unique (merchant_id, attempt)
);
create unique index if not exists billing_charges_one_in_flight on billing_charges (merchant_id)
  where status in ('claimed', 'requested');
create index if not exists billing_charges_newest on billing_charges (merchant_id, created_at desc, id desc);
