-- Payouts (commissions service): one per affiliate and currency, grouping approved commissions until they are paid.

create table payouts (
  id             text primary key,                     -- po_…
  merchant_id    text not null references merchants (id),
  affiliate_id   text not null,
  amount         numeric(20, 4) not null check (amount >= 0),
  currency       text not null check (currency ~ '^[A-Z]{3}$'),
  status         text not null check (status in ('pending', 'sent', 'paid', 'failed', 'canceled')),
  method         text check (method in ('manual')),    -- how it was sent; null until then
  reference      text,                                 -- the merchant's reference of the transfer
  -- The earliest and latest created_at of the commissions it groups.
  period_start   timestamptz not null,
  period_end     timestamptz not null,
  created_at     timestamptz not null,
  sent_at        timestamptz,
  paid_at        timestamptz,
  failed_at      timestamptz,
  canceled_at    timestamptz,
  failure_reason text,
  -- Why it may not be sent yet; null when it may.
  held_reason    text check (held_reason in ('tax_form_required')),
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id),
  check ((status = 'failed') = (failed_at is not null)),
  check (held_reason is null or status = 'pending')
);
create unique index payouts_merchant_id on payouts (merchant_id, id);
create index payouts_list on payouts (merchant_id, created_at desc, id desc);
create index payouts_list_status on payouts (merchant_id, status, created_at desc, id desc);
create index payouts_list_affiliate on payouts (merchant_id, affiliate_id, created_at desc, id desc);
-- What a tax form's arrival releases.
create index payouts_held on payouts (merchant_id, affiliate_id) where held_reason is not null;

-- The commissions of each payout. A link is released when its payout fails or is canceled, or when its commission is
-- voided while the payout is pending; released links stay as the history of what the payout grouped.
create table payout_commissions (
  merchant_id   text not null,
  payout_id     text not null,
  commission_id text not null,
  released_at   timestamptz,
  primary key (payout_id, commission_id),
  foreign key (merchant_id, payout_id) references payouts (merchant_id, id),
  foreign key (commission_id) references commissions (id)
);
-- A commission is in at most one payout that has not released it, whatever runs concurrently.
create unique index payout_commissions_open on payout_commissions (merchant_id, commission_id) where released_at is null;

-- Paid commissions per affiliate and currency: lifetime_commissions_paid counts the merchant's currency only.
alter table affiliate_stats add column commissions_paid numeric not null default 0;

-- One row per merchant and month the payout_day schedule has run for: replicas claim it, so it runs once.
create table payout_schedule_runs (
  merchant_id text not null references merchants (id),
  period      text not null check (period ~ '^\d{4}-\d{2}$'),  -- the UTC year and month
  ran_at      timestamptz not null,
  payouts     integer not null,
  primary key (merchant_id, period)
);
