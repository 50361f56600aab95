-- Money already on its way is never rewritten (docs/PAYOUTS.md, "Refunds and voids of paid-out money", "Clawbacks",
-- "The CSV export"): a payout is frozen once exported, sending or sent; a refund or void of one of its commissions is
-- recorded on the commission and settled when the payout's outcome is known; money paid for a commission voided
-- afterwards is clawed back from the affiliate's next payouts.

-- The first time the payout was in an exported file. An exported pending payout no longer changes amount or
-- commissions: the bank may already hold the file.
alter table payouts add column exported_at timestamptz;

-- A refund or void that arrived while the commission's payout was frozen: the commission stays as it is until the
-- payout fails or is canceled (it is then voided with this reason) or is paid (then it is voided and clawed back).
alter table commissions add column void_requested_at timestamptz, add column void_requested_reason text;
alter table commissions add constraint commissions_void_request
  check ((void_requested_at is null) = (void_requested_reason is null));

-- Who exported which payouts, and when: every call of the export, which decrypts bank details.
create table payout_exports (
  id                bigint generated always as identity primary key,
  merchant_id       text not null references merchants (id),
  api_key_id        text,                                -- key_… when an API key asked
  dashboard_user_id text,                                -- usr_… when a dashboard user asked
  layout            text not null check (layout in ('paypal', 'bank')),
  status            text not null,                       -- the status filter asked for
  currency          text,                                -- the currency filter, if any
  payout_ids        text[] not null,                     -- the payouts that have a row in the file
  created_at        timestamptz not null,
  check ((api_key_id is null) <> (dashboard_user_id is null))
);
create index payout_exports_list on payout_exports (merchant_id, created_at desc, id desc);

-- Money paid to an affiliate for a commission voided afterwards (a refund after its payout was paid, or a refund or
-- void recorded while the payout was frozen, once that payout is paid). One per commission, so a replayed refund
-- claws back nothing twice. What is still owed is amount minus its adjustments in payouts that did not fail and were
-- not canceled: a failed payout gives its deduction back without any write.
create table payout_clawbacks (
  merchant_id   text not null references merchants (id),
  commission_id text not null,
  affiliate_id  text not null,
  payout_id     text not null,                           -- the paid payout that carried the commission
  amount        numeric(20, 4) not null check (amount > 0),
  currency      text not null check (currency ~ '^[A-Z]{3}$'),
  created_at    timestamptz not null,
  primary key (merchant_id, commission_id),
  foreign key (commission_id) references commissions (id),
  foreign key (merchant_id, payout_id) references payouts (merchant_id, id)
);
create index payout_clawbacks_affiliate on payout_clawbacks (merchant_id, affiliate_id, currency, created_at);

-- The part of a clawback a payout deducts (the payout's amount is its commissions' sum minus its adjustments, never
-- below zero; what does not fit stays owed for the next payout).
create table payout_adjustments (
  merchant_id   text not null,
  payout_id     text not null,
  commission_id text not null,                           -- the clawback's commission
  amount        numeric(20, 4) not null check (amount > 0),
  created_at    timestamptz not null,
  primary key (payout_id, commission_id),
  foreign key (merchant_id, payout_id) references payouts (merchant_id, id),
  foreign key (merchant_id, commission_id) references payout_clawbacks (merchant_id, commission_id)
);
create index payout_adjustments_clawback on payout_adjustments (merchant_id, commission_id);
