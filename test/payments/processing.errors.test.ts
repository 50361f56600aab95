import t from 'tap';
import type { Sql } from '@platform/shared/db';
import { IdempotencyKeyReused, sandboxProcessor, type PaymentProcessor } from '@platform/payments/processor';
import { loadPaymentsConfig } from '@platform/payments/config';
import { startPaymentsService } from '@platform/payments/service';
import { captureLogger, eventually } from '../helpers/platform.ts';
import { startPayments } from './setup.ts';

// Processor calls: made after the intent is committed as processing, outside any row lock, with the intent, the
// operation and the attempt as the idempotency key; a crash between a call and the write of its outcome is finished
// by the reconciler asking the processor again, and money never moves twice.

/** What the processor saw when it was called: the intent's committed status, and whether its row was locked. */
const seen: { operation: string; key: string; status: string; locked: boolean }[] = [];
const own: { sql?: Sql } = {};
const watching = (sql: Sql): PaymentProcessor => {
  const sandbox = sandboxProcessor(sql);
  const look = async (operation: string, key: string) => {
    const id = key.split(':')[0]!;
    // From the test's own connection: what is committed, and whether a transaction holds the row's lock.
    const [row] = await own.sql!<{ status: string }[]>`select status from payment_intents where id = ${id}`;
    const locked = await own
      .sql!.begin(async (tx) => tx`select 1 from payment_intents where id = ${id} for update nowait`)
      .then(
        () => false,
        () => true,
      );
    seen.push({ operation, key, status: row!.status, locked });
  };
  return {
    lookup: (m, live) => sandbox.lookup(m, live),
    authorize: async (r) => (await look('authorize', r.idempotencyKey), sandbox.authorize(r)),
    capture: async (r) => (await look('capture', r.idempotencyKey), sandbox.capture(r)),
  };
};

const stack = await startPayments(t, {
  paymentsEnv: { PAYMENT_PROCESSING_RECOVER_AFTER_MS: '1000' },
  processor: watching,
});
const { platform, test } = stack;
own.sql = platform.sql;

const calls = (intentId: string) =>
  platform.sql<{ idempotency_key: string; operation: string }[]>`
    select idempotency_key, operation from sandbox_processor_calls where idempotency_key like ${intentId + ':%'}
    order by idempotency_key`;
const charges = async (intentId: string) =>
  (await platform.sql`select id from ledger_movements where kind = 'charge' and source = ${intentId}`).length;

t.test('the processor is called with the intent committed as processing and its row unlocked', async (t) => {
  seen.length = 0;
  const paid = await test.paymentIntents.create({
    amount: 2000,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
  });
  t.equal(paid.status, 'succeeded');
  const held = await test.paymentIntents.create({
    amount: 3000,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    capture_method: 'manual',
  });
  t.equal((await test.paymentIntents.confirm(held.id)).status, 'requires_capture');
  t.equal((await test.paymentIntents.capture(held.id)).status, 'succeeded');
  t.same(
    seen.map(({ key: _, ...call }) => call),
    ['authorize', 'capture', 'authorize', 'capture'].map((operation) => ({
      operation,
      status: 'processing',
      locked: false,
    })),
  );
  t.same(await calls(paid.id), [
    { idempotency_key: `${paid.id}:capture:1`, operation: 'capture' },
    { idempotency_key: `${paid.id}:confirm:1`, operation: 'authorize' },
  ]);
  t.same(
    (await calls(held.id)).map((c) => c.idempotency_key),
    [`${held.id}:capture:2`, `${held.id}:confirm:1`],
    'the capture is the second attempt',
  );
});

t.test('the sandbox remembers idempotency keys: asked again it answers the first outcome', async (t) => {
  const sandbox = sandboxProcessor(platform.sql);
  const request = { paymentMethod: 'pm_card_visa', amount: 500, currency: 'usd', livemode: false };
  const first = await sandbox.capture({ ...request, idempotencyKey: 'pi_sandbox_check:capture:1' });
  const again = await sandbox.capture({ ...request, idempotencyKey: 'pi_sandbox_check:capture:1' });
  t.same(again, first);
  t.equal((await calls('pi_sandbox_check')).length, 1, 'one capture');
  await t.rejects(
    sandbox.capture({ ...request, amount: 600, idempotencyKey: 'pi_sandbox_check:capture:1' }),
    IdempotencyKeyReused,
  );
  const declined = { ...request, paymentMethod: 'pm_card_chargeDeclined', actionCompleted: false };
  t.match(await sandbox.authorize({ ...declined, idempotencyKey: 'pi_sandbox_check:confirm:1' }), {
    kind: 'declined',
  });
});

/** An intent as a crash leaves it: committed as processing (attempt 1), a minute ago, its outcome never written. */
async function crashedIntent(over: { capture_method?: 'manual' } = {}) {
  const intent = await test.paymentIntents.create({
    amount: 4000,
    currency: 'usd',
    payment_method: 'pm_card_bypassPending',
    ...over,
  });
  const request = { paymentMethod: 'pm_card_bypassPending', amount: 4000, currency: 'usd', actionCompleted: false };
  await platform.sql`
    update payment_intents set status = 'processing', processor_attempts = 1, processing_operation = 'confirm',
      processing_request = ${platform.sql.json(request)}, processing_since = now() - interval '1 minute'
    where id = ${intent.id}`;
  return { intent, request };
}

t.test('a crash after the processor captured: the reconciler finishes the intent, no second capture', async (t) => {
  const { intent, request } = await crashedIntent();
  // The processor took the money before the crash: authorized and captured under the request's keys.
  const sandbox = sandboxProcessor(platform.sql);
  const key = (op: string) => `${intent.id}:${op}:1`;
  await sandbox.authorize({ ...request, livemode: false, idempotencyKey: key('confirm') });
  const { actionCompleted: _, ...capture } = request;
  await sandbox.capture({ ...capture, livemode: false, idempotencyKey: key('capture') });

  const done = await eventually(
    async () => {
      const row = await test.paymentIntents.retrieve(intent.id);
      return row.status === 'processing' ? undefined : row;
    },
    10_000,
    'the reconciler to finish the intent',
  );
  t.equal(done.status, 'succeeded');
  t.equal(done.amount_received, 4000);
  t.same(
    (await calls(intent.id)).map((c) => c.operation),
    ['capture', 'authorize'],
    'the processor captured once: asked again, it replayed',
  );
  t.equal(await charges(intent.id), 1, 'one charge in the ledger');
  const [row] = await platform.sql`
    select processing_operation, processing_request, processing_since from payment_intents where id = ${intent.id}`;
  t.same(row, { processing_operation: null, processing_request: null, processing_since: null });
  // The client retrying its confirm now is told the intent is done, and nothing moves.
  await t.rejects(test.paymentIntents.confirm(intent.id), { code: 'payment_intent_unexpected_state' });
  t.equal(await charges(intent.id), 1);
});

t.test('a crash before the processor was called: the reconciler makes the call, once', async (t) => {
  const { intent } = await crashedIntent({ capture_method: 'manual' });
  const done = await eventually(
    async () => {
      const row = await test.paymentIntents.retrieve(intent.id);
      return row.status === 'processing' ? undefined : row;
    },
    10_000,
    'the reconciler to finish the intent',
  );
  t.equal(done.status, 'requires_capture');
  t.same(
    (await calls(intent.id)).map((c) => c.idempotency_key),
    [`${intent.id}:confirm:1`],
  );
  t.equal(await charges(intent.id), 0, 'nothing captured yet');
});

t.test('a retried confirm or capture replays its answer and never captures twice', async (t) => {
  const intent = await test.paymentIntents.create({
    amount: 1500,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    capture_method: 'manual',
    confirm: true,
  });
  const capture = () => test.paymentIntents.capture(intent.id, {}, { idempotencyKey: `capture-${intent.id}` });
  const [first, second] = await Promise.allSettled([capture(), capture()]);
  const answers = [first, second].filter((a) => a.status === 'fulfilled').map((a) => a.value);
  t.ok(answers.length >= 1, 'at least one answer');
  for (const answer of answers) t.match(answer, { id: intent.id, status: 'succeeded', amount_received: 1500 });
  const replay = await capture();
  t.same(replay, answers[0], 'the same answer again');
  await t.rejects(test.paymentIntents.capture(intent.id), { code: 'payment_intent_unexpected_state' });
  t.equal((await calls(intent.id)).filter((c) => c.operation === 'capture').length, 1, 'one capture');
  t.equal(await charges(intent.id), 1, 'one charge in the ledger');
});

t.test('two replicas reconcile crashed intents together: each is asked of the processor once', async (t) => {
  const second = await startPaymentsService(
    loadPaymentsConfig({
      ...platform.env,
      PUBLIC_BASE_URL: platform.baseUrl,
      PAYMENT_PROCESSING_RECOVER_AFTER_MS: '1000',
    }),
    captureLogger('payments-2').log,
    watching,
  );
  t.teardown(() => second.close());
  seen.length = 0;
  const crashed = await Promise.all(Array.from({ length: 12 }, () => crashedIntent()));
  for (const { intent } of crashed)
    await eventually(
      async () => ((await test.paymentIntents.retrieve(intent.id)).status === 'succeeded' ? true : undefined),
      10_000,
      `${intent.id} finished`,
    );
  const keys = seen.map((c) => c.key);
  const ids = new Set(crashed.map((c) => c.intent.id));
  t.same(
    keys.filter((k) => !ids.has(k.split(':')[0]!)),
    [],
    'no other call',
  );
  t.equal(keys.length, 24, `an authorize and a capture each: ${keys.length}`);
  t.equal(new Set(keys).size, 24, 'no call made twice');
  for (const { intent } of crashed) t.equal(await charges(intent.id), 1);
});
