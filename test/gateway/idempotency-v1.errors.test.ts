import t from 'tap';
import Stripe from 'stripe';
import { eventually } from '../helpers/platform.ts';
import { startPayments } from '../payments/setup.ts';

// Stripe's refusals of Idempotency-Key on /v1, through the official SDK and raw HTTP.
const stack = await startPayments(t);
const { platform, test: stripe } = stack;

const accountsWith = async (email: string) =>
  (await platform.sql<{ n: number }[]>`select count(*)::int as n from payment_accounts where email = ${email}`)[0]!.n;

const postForm = (form: string, headers: Record<string, string>, key = stack.testKey.key) =>
  fetch(`${platform.baseUrl}/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form,
  });

t.test('the same key with other parameters: 400 idempotency_error, which the SDK raises as such', async (t) => {
  await stripe.accounts.create({ type: 'express', email: 'first@acme.example' }, { idempotencyKey: 'reused' });
  const err = await stripe.accounts
    .create({ type: 'express', email: 'second@acme.example' }, { idempotencyKey: 'reused' })
    .then(
      () => null,
      (e: unknown) => e,
    );
  t.ok(err instanceof Stripe.errors.StripeIdempotencyError, 'StripeIdempotencyError');
  const e = err as Stripe.errors.StripeError;
  t.equal(e.statusCode, 400);
  t.equal(e.rawType, 'idempotency_error');
  t.equal(
    e.message,
    'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
      "Try using a key other than 'reused' if you meant to execute a different request.",
  );
  t.equal(await accountsWith('second@acme.example'), 0, 'the second request did nothing');

  const raw = await postForm('type=express&email=third%40acme.example', { 'idempotency-key': 'reused' });
  t.equal(raw.status, 400);
  t.ok(raw.headers.get('request-id'), 'Request-Id');
  t.strictSame(await raw.json(), {
    error: {
      type: 'idempotency_error',
      message:
        'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
        "Try using a key other than 'reused' if you meant to execute a different request.",
    },
  });
});

t.test('the same key and body acting for another connected account (Stripe-Account) is another request', async (t) => {
  const form = 'type=express&email=context%40acme.example';
  const first = await postForm(form, { 'idempotency-key': 'by-account' });
  t.equal(first.status, 200);
  const other = await postForm(form, {
    'idempotency-key': 'by-account',
    'stripe-account': 'acct_0000000000000000000000000a',
  });
  t.equal(other.status, 400);
  t.equal(((await other.json()) as { error: { type: string } }).error.type, 'idempotency_error');
});

t.test('an empty key or one over 255 characters is a clear 400', async (t) => {
  for (const key of ['', 'k'.repeat(256)]) {
    const res = await postForm('type=express&email=badkey%40acme.example', { 'idempotency-key': key });
    t.equal(res.status, 400);
    t.strictSame(await res.json(), {
      error: {
        type: 'invalid_request_error',
        message: 'Invalid Idempotency-Key: it must be 1 to 255 printable ASCII characters.',
        param: 'Idempotency-Key',
      },
    });
  }
  t.equal(await accountsWith('badkey@acme.example'), 0);
});

t.test('a key whose first request is still running: 409 idempotency_key_in_use after the wait', async (t) => {
  const form = 'type=express&email=running%40acme.example';
  t.equal((await postForm(form, { 'idempotency-key': 'running' })).status, 200);
  // On a loaded machine the answer may go out before it is stored: the row is changed only once the answer is in
  // it, or the late store would undo the change.
  await eventually(
    async () =>
      (await platform.sql`select 1 from idempotency_keys where key = 'running' and status is not null`).length > 0 ||
      undefined,
    10_000,
    'the first answer stored',
  );
  await platform.sql`
    update idempotency_keys set status = null, headers = null, body = null, locked_until = now() + interval '1 hour'
    where key = 'running'`;
  const res = await postForm(form, { 'idempotency-key': 'running' });
  t.equal(res.status, 409);
  t.equal(res.headers.get('retry-after'), '1');
  t.strictSame(await res.json(), {
    error: {
      type: 'idempotency_error',
      code: 'idempotency_key_in_use',
      message:
        'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
        'submitted twice, and the other request is still going through): running. Please try again later.',
    },
  });
});
