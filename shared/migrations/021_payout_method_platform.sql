-- Payouts may be paid through the platform payment API's ledger (method platform) as well as by hand (manual).
alter table payouts drop constraint payouts_method_check;
alter table payouts add constraint payouts_method_check check (method in ('manual', 'platform'));
