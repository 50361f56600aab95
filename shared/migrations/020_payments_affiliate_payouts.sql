-- Affiliate payouts paid through the ledger (method `platform`): the ledger payout keeps the affiliate payout it pays
-- (at most one ledger payout each, so a repeated request finds the first), the connected account that funded it, and
-- which of its outcomes the commissions service has acknowledged.
alter table payment_payouts
  add column affiliate_payout_id text,
  add column merchant_id         text,
  add column funded_by           text,
  add column reported_status     text;
create unique index payment_payouts_affiliate_payout on payment_payouts (affiliate_payout_id)
  where affiliate_payout_id is not null;
create index payment_payouts_unreported on payment_payouts (status_changed_at)
  where affiliate_payout_id is not null and status in ('paid', 'failed') and reported_status is distinct from status;
