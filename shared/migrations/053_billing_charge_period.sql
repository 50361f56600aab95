-- An upgrade's claim keeps the period its amount was prorated for (docs/BILLING.md): a claim resumed after its month
-- ended settles with that period, not one worked out again at settle time (a whole new month for a prorated amount).
alter table billing_charges
  add column if not exists period_start timestamptz,
  add column if not exists period_end timestamptz;
