import t from 'tap';
import { eventually } from '../helpers/platform.ts';
import { fundedAccount, startPayments } from './setup.ts';

// The ledger is history: its rows cannot be changed or removed, and a reconciler compares every balance with the sum
// of its entries, reporting any difference in a metric (alert PaymentsLedgerBalanceMismatch) and the log.
const stack = await startPayments(t, { paymentsEnv: { LEDGER_RECONCILE_INTERVAL_MS: '200' } });
const { platform } = stack;
const account = await fundedAccount(stack, 5000);
await stack.test.paymentIntents.create({
  amount: 2000,
  currency: 'usd',
  payment_method: 'pm_card_visa',
  confirm: true,
  transfer_data: { destination: account.id },
});

const mismatchGauge = async () => {
  const text = await (await fetch(`http://127.0.0.1:${stack.payments.opsPort}/metrics`)).text();
  const line = /^payments_ledger_balance_mismatches\{service="payments"\} (\S+)$/m.exec(text);
  return line ? Number(line[1]) : undefined;
};
const passes = async () => {
  const text = await (await fetch(`http://127.0.0.1:${stack.payments.opsPort}/metrics`)).text();
  return Number(
    /^payments_ledger_reconcile_passes_total\{outcome="ok",service="payments"\} (\S+)$/m.exec(text)?.[1] ?? 0,
  );
};

t.test('ledger entries and movements cannot be updated, deleted or truncated', async (t) => {
  const [entry] = await platform.sql<{ id: string; movement_id: string }[]>`
    select id, movement_id from ledger_entries order by id limit 1`;
  const refusal = { message: /cannot be changed or removed/, code: '42501' };
  await t.rejects(platform.sql`update ledger_entries set amount = amount + 100 where id = ${entry!.id}`, refusal);
  await t.rejects(platform.sql`delete from ledger_entries where id = ${entry!.id}`, refusal);
  await t.rejects(
    platform.sql`update ledger_movements set kind = 'transfer' where id = ${entry!.movement_id}`,
    refusal,
  );
  await t.rejects(platform.sql`delete from ledger_movements where id = ${entry!.movement_id}`, refusal);
  await t.rejects(platform.sql`truncate ledger_entries, ledger_movements cascade`, refusal);
  const unbalanced = await platform.sql`
    select movement_id from ledger_entries group by movement_id, currency having sum(amount) <> 0`;
  t.same(unbalanced, [], 'every movement still sums to zero');
});

t.test('a balance tampered with outside the ledger is reported until it is put right', async (t) => {
  t.equal(
    await eventually(async () => ((await passes()) > 0 ? mismatchGauge() : undefined), 10_000, 'a pass'),
    0,
    'a consistent ledger: no mismatch while money moved',
  );
  await platform.sql`
    update ledger_balances set amount = amount + 100000
    where holder = ${account.id} and bucket = 'available' and not livemode`;
  t.equal(
    await eventually(async () => ((await mismatchGauge()) === 1 ? 1 : undefined), 10_000, 'the mismatch reported'),
    1,
  );
  const logged = stack.logs.find((l) => l.includes('ledger balance differs from its entries'));
  t.ok(logged, 'logged');
  t.match(JSON.parse(logged!), {
    holder: account.id,
    bucket: 'available',
    currency: 'usd',
    balance: '105000',
    entries: '5000',
    livemode: false,
  });
  // A pending balance that says more than its entries: a balance transaction's net changed by hand.
  await platform.sql`update balance_transactions set net = net + 1 where holder = ${account.id} and status = 'pending'`;
  await eventually(async () => ((await mismatchGauge()) === 2 ? true : undefined), 10_000, 'both mismatches');

  await platform.sql`update balance_transactions set net = net - 1 where holder = ${account.id} and status = 'pending'`;
  await platform.sql`
    update ledger_balances set amount = amount - 100000
    where holder = ${account.id} and bucket = 'available' and not livemode`;
  await eventually(async () => ((await mismatchGauge()) === 0 ? true : undefined), 10_000, 'the gauge back to 0');
});
