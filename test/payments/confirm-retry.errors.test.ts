import t from 'tap';
import { eventually, startPlatform } from '../helpers/platform.ts';
import { holdRows } from '../helpers/locks.ts';
import { attachPayments, fundedAccount } from './setup.ts';

// A confirmation whose charge the processor took, but whose record cannot be written (the receiving balance row held
// by another transaction past lock_timeout): the answer is the intent, `processing`, kept on the Idempotency-Key, so
// that a retry with the key replays it rather than creating and charging another intent. The reconciler records the
// charge once the row is free. The services' lock timeout is set well below the gateway's deadline here, so that the
// write fails while the caller waits.
const platform = await startPlatform(t, { env: { DATABASE_LOCK_TIMEOUT_MS: '300' } });
const stack = await attachPayments(t, platform, { paymentsEnv: { PAYMENT_PROCESSING_RECOVER_AFTER_MS: '1000' } });
const { sql } = platform;
const account = await fundedAccount(stack, 10_000);

/** A transaction of the test's own holding the account's balance rows, as a concurrent payout would. */
const holdBalance = () =>
  holdRows(sql, (tx) => tx`select amount from ledger_balances where holder = ${account.id} for update`);

const intentsOf = async (description: string) =>
  (await sql<{ id: string }[]>`select id from payment_intents where description = ${description}`).map((r) => r.id);
const captures = async (intentIds: string[]) =>
  (
    await sql<{ n: number }[]>`
      select count(*)::int as n from sandbox_processor_calls
      where operation = 'capture' and split_part(idempotency_key, ':', 1) = any(${intentIds})`
  )[0]!.n;
const charges = async (intentIds: string[]) =>
  (
    await sql<{ n: number }[]>`
      select count(*)::int as n from ledger_movements where kind = 'charge' and source = any(${intentIds})`
  )[0]!.n;
const statusOf = (id: string) =>
  eventually(async () => {
    const [row] = await sql<{ status: string }[]>`select status from payment_intents where id = ${id}`;
    return row!.status === 'succeeded' ? row!.status : undefined;
  });

t.test(
  'create with confirm=true, retried with its key while the balance row is held: one intent, one charge',
  async (t) => {
    const release = await holdBalance();
    const create = () =>
      stack.test.paymentIntents.create(
        {
          amount: 2000,
          currency: 'usd',
          payment_method: 'pm_card_bypassPending',
          confirm: true,
          description: 'held-create',
        },
        { stripeAccount: account.id, idempotencyKey: 'pi-held-create' },
      );
    let first;
    try {
      first = await create();
    } catch (err) {
      await release();
      throw err;
    }
    t.equal(first.status, 'processing', 'the charge taken but not yet recorded: the intent answered as processing');
    const retried = await create();
    t.equal(retried.id, first.id, 'the retry with the key answers the same intent');
    t.equal(retried.lastResponse.headers['idempotent-replayed'], 'true', 'replayed, not done again');
    const made = await intentsOf('held-create');
    t.same(made, [first.id], 'one intent');
    t.equal(await captures(made), 1, 'one capture at the processor');

    await release();
    t.equal(await statusOf(first.id), 'succeeded', 'the reconciler finishes it once the row is free');
    t.equal(await charges(made), 1, 'and the ledger records the charge once');
    t.equal(await captures(made), 1, 'still one capture');
  },
);

t.test('confirm retried with its key while the first is processing: answered as it stands, never a 400', async (t) => {
  const intent = await stack.test.paymentIntents.create(
    { amount: 3000, currency: 'usd', payment_method: 'pm_card_bypassPending', description: 'held-confirm' },
    { stripeAccount: account.id },
  );
  const release = await holdBalance();
  const confirm = () =>
    stack.test.paymentIntents.confirm(intent.id, {}, { stripeAccount: account.id, idempotencyKey: 'pi-held-confirm' });
  let first;
  try {
    first = await confirm();
  } catch (err) {
    await release();
    throw err;
  }
  t.equal(first.status, 'processing', 'the first confirmation answered processing');
  const retried = await confirm();
  t.equal(retried.status, 'processing', 'the retry with the key replays it');
  // A confirmation with another key (its first answer lost before it was kept) meets the intent processing: answered
  // as it stands, rather than a 400 that would be kept while the charge goes through.
  const other = await stack.test.paymentIntents.confirm(
    intent.id,
    {},
    { stripeAccount: account.id, idempotencyKey: 'pi-held-confirm-other' },
  );
  t.equal(other.status, 'processing', 'a confirmation of an intent in processing answers it as it is');
  t.equal(await captures([intent.id]), 1, 'one capture at the processor');

  await release();
  t.equal(await statusOf(intent.id), 'succeeded', 'the reconciler finishes it once the row is free');
  t.equal(await charges([intent.id]), 1, 'and the ledger records the charge once');
  t.equal(await captures([intent.id]), 1, 'still one capture');
});
