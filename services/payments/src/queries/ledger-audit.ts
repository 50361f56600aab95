import type { Sql } from '@platform/shared/db';

/** A balance that differs from the sum of the ledger entries behind it. */
export interface BalanceMismatch {
  livemode: boolean;
  holder: string;
  currency: string;
  bucket: 'available' | 'pending';
  /** What the balance says: the ledger_balances row (available) or the pending balance transactions' net. */
  balance: string;
  /** What the entries say. */
  entries: string;
}

/**
 * Every inside holder's balance compared with the sum of its entries, per mode, currency and bucket, in one statement
 * (one snapshot: a movement, its entries and its balance changes commit together, so a consistent ledger shows no
 * difference while money moves). Available balances are the ledger_balances rows payouts draw on; pending ones are the
 * net of the holder's pending balance transactions. Outside parties keep no balance and are not compared.
 */
export function balanceMismatches(sql: Sql) {
  return sql<BalanceMismatch[]>`
    with entries as (
      select livemode, holder, currency, bucket, sum(amount) as amount from ledger_entries
      where holder not like 'external:%'
      group by livemode, holder, currency, bucket
    ), kept as (
      select livemode, holder, currency, bucket, amount from ledger_balances where bucket = 'available'
      union all
      select livemode, holder, currency, 'pending', sum(net) from balance_transactions
      where status = 'pending'
      group by livemode, holder, currency
    )
    select livemode, holder, currency, bucket, coalesce(k.amount, 0)::text as balance,
      coalesce(e.amount, 0)::text as entries
    from entries e full join kept k using (livemode, holder, currency, bucket)
    where coalesce(e.amount, 0) <> coalesce(k.amount, 0)
    order by livemode, holder, currency, bucket`;
}
