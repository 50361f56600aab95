-- The payout details history in the order its changes took effect. changed_at is when the change's transaction
-- began, to the millisecond, and the id is random: two changes of one affiliate at once (both wait on the
-- affiliate's row lock, docs/PAYOUTS.md) can share a millisecond, or even hold the lock in the other order. A number
-- from a sequence, drawn when the row is inserted, under that lock, follows the order the changes were made.
-- The column is added without a default and the default set after: a volatile default in ADD COLUMN would rewrite
-- the table under its lock, this way no row is read or written. Rows written before have none; every one of them
-- is older than any row with one (the ALTER waits for the writes before it), and they keep their old order.
-- A replica still running the previous code inserts without naming the column and gets a number all the same.
-- No index: the history is read one affiliate's rows at a time, through payout_details_changes_affiliate.
create sequence if not exists payout_details_changes_seq;
alter table payout_details_changes add column if not exists seq bigint;
alter table payout_details_changes alter column seq set default nextval('payout_details_changes_seq');
alter sequence payout_details_changes_seq owned by payout_details_changes.seq;
