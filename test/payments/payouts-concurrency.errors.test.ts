import t from 'tap';
import { fundedAccount, startPayments } from './setup.ts';

t.test('50 concurrent payouts against a balance that covers 20: exactly 20 are made', async (t) => {
  const stack = await startPayments(t, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
  const account = await fundedAccount(stack, 20 * 500);
  const asAccount = { stripeAccount: account.id };
  const { sql } = stack.platform;

  // Watch the balance while the payouts run: it may never be seen below zero.
  let lowest = Infinity;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const [row] = await sql<{ amount: string }[]>`
        select amount from ledger_balances where holder = ${account.id} and bucket = 'available'`;
      lowest = Math.min(lowest, Number(row!.amount));
    }
  })();

  const outcomes = await Promise.all(
    Array.from({ length: 50 }, () =>
      stack.test.payouts.create({ amount: 500, currency: 'usd' }, asAccount).then(
        (p) => ({ ok: p.id }),
        (e: { code?: string; statusCode?: number }) => ({ code: e.code, status: e.statusCode }),
      ),
    ),
  );
  watching = false;
  await watcher;

  const made = outcomes.filter((o) => 'ok' in o);
  const refused = outcomes.filter((o) => !('ok' in o));
  t.equal(made.length, 20);
  t.equal(refused.length, 30);
  t.same(
    new Set(refused.map((r) => JSON.stringify(r))),
    new Set([JSON.stringify({ code: 'balance_insufficient', status: 400 })]),
  );
  t.ok(lowest >= 0, `the balance never went below zero (lowest seen ${lowest})`);
  t.same((await stack.test.balance.retrieve({}, asAccount)).available, [{ amount: 0, currency: 'usd' }]);
  t.equal((await stack.test.payouts.list({ limit: 100 }, asAccount)).data.length, 20);

  // The ledger: every movement sums to zero, the balance is the sum of its entries, no refused payout left a trace.
  t.same(await sql`select movement_id from ledger_entries group by movement_id, currency having sum(amount) <> 0`, []);
  const [sums] = await sql<{ entries: string; balance: string }[]>`
    select (select sum(amount) from ledger_entries where holder = ${account.id} and bucket = 'available') as entries,
           (select amount from ledger_balances where holder = ${account.id} and bucket = 'available') as balance`;
  t.equal(sums!.entries, sums!.balance);
  const [moves] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_movements where kind = 'payout'`;
  t.equal(moves!.n, 20);
});

t.test('an unbalanced movement cannot be committed', async (t) => {
  const stack = await startPayments(t);
  const { sql } = stack.platform;
  await t.rejects(
    sql.begin(async (tx) => {
      const [m] =
        await tx`insert into ledger_movements (livemode, kind, source) values (false, 'payout', 'po_x') returning id`;
      await tx`insert into ledger_entries (movement_id, livemode, holder, currency, bucket, amount)
        values (${m!['id'] as string}, false, 'platform', 'usd', 'available', 100)`;
    }),
    { message: /is not balanced/ },
  );
});
