-- Pending funds are no longer kept as balance rows (a payment would wait on the row lock of every other payment to
-- the same holder): a pending balance is the sum of the holder's pending balance transactions.
create index balance_transactions_pending on balance_transactions (livemode, holder, currency) where status = 'pending';
delete from ledger_balances where bucket = 'pending';
