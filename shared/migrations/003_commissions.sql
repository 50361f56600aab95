-- Commissions service: commissions, the conversions it has processed, affiliates' attributed revenue (tiers) and
-- fraud flags. Conversion events themselves belong to the events service (conversion_events): they are referenced
-- by id only, never by foreign key, so that this migration does not depend on theirs.

-- One row per conversion event the commissions service has taken into account, written in the same transaction as
-- the commissions it produced. Inserting it first (ON CONFLICT DO NOTHING) is the exactly-once guard for the whole
-- processing of an event, so that JetStream redelivering `conversion.recorded` changes nothing the second time.
-- It also carries what the velocity rule counts and what a later refund must subtract from attributed revenue.
create table processed_conversions (
  merchant_id      text not null references merchants (id),
  event_id         text not null,                      -- evt_…
  event_type       text not null,
  external_id      text not null,                      -- the merchant's order id
  affiliate_id     text,
  amount           numeric not null check (amount >= 0),
  currency         text not null check (currency ~ '^[A-Z]{3}$'),
  visit_id         text,
  ip_hash          text,
  occurred_at      timestamptz not null,               -- when the events service recorded the event
  -- The amount added to affiliate_stats for tiers (null when the conversion did not count), and whether a refund
  -- has taken it out again.
  revenue_counted  numeric,
  revenue_reversed boolean not null default false,
  processed_at     timestamptz not null,
  primary key (merchant_id, event_id)
);
create index processed_conversions_order on processed_conversions (merchant_id, external_id);
create index processed_conversions_visit on processed_conversions (merchant_id, visit_id, occurred_at) where visit_id is not null;
create index processed_conversions_ip on processed_conversions (merchant_id, ip_hash, occurred_at) where ip_hash is not null;

create table commissions (
  id           text primary key,                       -- com_…
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  event_id     text not null,                          -- the conversion event (events service); no foreign key
  order_id     text not null,                          -- the event's external_id
  level        smallint not null check (level between 0 and 5),
  -- Level 0: the fraction of the event amount (null for a flat rule). Level k ≥ 1: the merchant's level rate,
  -- the fraction of the direct (level 0) commission.
  rate         numeric check (rate >= 0 and rate <= 1),
  amount       numeric(20, 4) not null check (amount > 0),
  currency     text not null check (currency ~ '^[A-Z]{3}$'),
  status       text not null check (status in ('pending', 'approved', 'paid', 'voided')),
  held         boolean not null default false,         -- a fraud rule fired: never approved automatically
  created_at   timestamptz not null,
  approved_at  timestamptz,
  voided_at    timestamptz,
  void_reason  text,
  paid_at      timestamptz,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id),
  check ((status = 'voided') = (voided_at is not null)),
  check ((status = 'voided') = (void_reason is not null))
);
-- The exactly-once guard of the commissions themselves: an event yields at most one commission per level.
create unique index commissions_event_level on commissions (merchant_id, event_id, level);
create unique index commissions_merchant_id on commissions (merchant_id, id);
create index commissions_list on commissions (merchant_id, created_at desc, id desc);
create index commissions_list_status on commissions (merchant_id, status, created_at desc, id desc);
create index commissions_list_affiliate on commissions (merchant_id, affiliate_id, created_at desc, id desc);
create index commissions_list_affiliate_status on commissions (merchant_id, affiliate_id, status, created_at desc, id desc);
create index commissions_order on commissions (merchant_id, order_id);
-- What the hold-period scheduler scans.
create index commissions_hold_due on commissions (merchant_id, created_at) where status = 'pending' and not held;

-- Attributed revenue per affiliate and currency. Tier thresholds are read against the row in the merchant's
-- currency (settings.currency); amounts in other currencies are kept but not converted.
create table affiliate_stats (
  merchant_id        text not null references merchants (id),
  affiliate_id       text not null,
  currency           text not null check (currency ~ '^[A-Z]{3}$'),
  attributed_revenue numeric not null default 0,
  conversions        integer not null default 0,
  updated_at         timestamptz not null,
  primary key (merchant_id, affiliate_id, currency),
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);

create table fraud_flags (
  id           bigint generated always as identity primary key,
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  event_id     text,                                   -- the conversion event that triggered the rule
  rule         text not null check (rule in ('self_referral', 'own_fingerprint', 'conversion_velocity')),
  details      jsonb not null default '{}'::jsonb,
  created_at   timestamptz not null,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create unique index fraud_flags_event_rule on fraud_flags (merchant_id, event_id, rule) where event_id is not null;
create index fraud_flags_affiliate on fraud_flags (merchant_id, affiliate_id, created_at desc);
