import t from 'tap';
import { payoutFailureMovement, payoutMovement, transferMovement } from '@platform/payments/domain/ledger-rules';
import { postMovement, postMovements } from '@platform/payments/queries/ledger';
import { eventually, startPlatform } from '../helpers/platform.ts';

// A transaction that posts several movements locks every balance they touch first, in one order: a returned affiliate
// payout (the affiliate's credit, then the transfer back to the merchant's account) and a new affiliate payout (the
// account's transfer to the affiliate, then the affiliate's debit) touch the same two balances in opposite orders,
// and used to deadlock (40P01, a 500) when they met.
const platform = await startPlatform(t);
const { sql } = platform;
const account = 'acct_lockorder';
const affiliate = 'aff_lockorder';

await sql.begin(async (tx) => {
  await postMovement(tx, false, 'fund_account', payoutFailureMovement(account, 10_000, 'usd'));
  await postMovement(tx, false, 'fund_affiliate', payoutFailureMovement(affiliate, 10_000, 'usd'));
});

/** Resolves once `n` of this database's statements wait on a lock. */
const waitingOnLocks = (n: number) =>
  eventually(async () => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`;
    return row!.n >= n ? true : undefined;
  });

const balance = async (holder: string) =>
  Number(
    (
      await sql<{ amount: string }[]>`
        select amount::text from ledger_balances where livemode = false and holder = ${holder} and bucket = 'available'`
    )[0]!.amount,
  );

t.test('a returned payout and a new affiliate payout on the same balances do not deadlock', async (t) => {
  // The affiliate's balance held first, as another payout of theirs would: the returned payout queues on it.
  const holder = await sql.reserve();
  await holder`begin`;
  await holder`select amount from ledger_balances where holder = ${affiliate} for update`;
  const returned = sql.begin((tx) =>
    postMovements(tx, false, 'po_returned', [
      { movement: payoutFailureMovement(affiliate, 100, 'usd') },
      { movement: transferMovement(affiliate, account, 100, 'usd') },
    ]),
  );
  void returned.catch(() => {});
  await waitingOnLocks(1);
  const paid = sql.begin((tx) =>
    postMovements(tx, false, 'po_paid', [
      { movement: transferMovement(account, affiliate, 300, 'usd') },
      { movement: payoutMovement(affiliate, 300, 'usd') },
    ]),
  );
  void paid.catch(() => {});
  await waitingOnLocks(2);
  await holder`commit`;
  holder.release();
  const outcomes = await Promise.allSettled([returned, paid]);
  t.same(
    outcomes.map((o) => (o.status === 'fulfilled' ? 'committed' : (o.reason as { code?: string }).code)),
    ['committed', 'committed'],
    'both commit: no 40P01',
  );
  t.equal(await balance(account), 10_000 + 100 - 300, "the account's balance moved by both");
  t.equal(await balance(affiliate), 10_000 + 100 - 100 + 300 - 300, "the affiliate's too");
});
