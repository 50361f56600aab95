-- A change of payout details made in the affiliate portal (through a fresh e-mailed link) is audited as `portal`,
-- apart from the single-use onboarding page's `onboarding_link`. The check is widened: the new one is added NOT
-- VALID (every existing row already passes it, being within the old one), so no scan runs under the lock.
alter table payout_details_changes drop constraint if exists payout_details_changes_source_check;
alter table payout_details_changes drop constraint if exists payout_details_changes_source;
alter table payout_details_changes add constraint payout_details_changes_source
  check (source in ('api', 'dashboard', 'onboarding_link', 'portal')) not valid;
