import t from 'tap';
import { startPayments } from '../payments/setup.ts';

// The platform payment API (/v1) through the official Stripe SDK: Idempotency-Key as Stripe answers it.
const stack = await startPayments(t);
const { platform, test: stripe } = stack;
const merchantId = await stack.merchant();

const accountsWith = async (email: string) =>
  (await platform.sql<{ n: number }[]>`select count(*)::int as n from payment_accounts where email = ${email}`)[0]!.n;

/** A POST to /v1 as the SDK sends it (form-encoded), read raw. */
const postForm = (path: string, form: string, headers: Record<string, string> = {}) =>
  fetch(`${platform.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.testKey.key}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: form,
  });

t.test('the SDK retrying with its idempotencyKey gets the same account, created once', async (t) => {
  const params = { type: 'express' as const, email: 'once@acme.example', metadata: { merchant_id: merchantId } };
  const first = await stripe.accounts.create(params, { idempotencyKey: 'acct-once' });
  const again = await stripe.accounts.create(params, { idempotencyKey: 'acct-once' });
  t.equal(again.id, first.id);
  t.same(again, first);
  t.equal(again.lastResponse.headers['idempotent-replayed'], 'true');
  t.equal(again.lastResponse.headers['original-request'], first.lastResponse.requestId);
  t.not(again.lastResponse.requestId, first.lastResponse.requestId, 'Request-Id names the replaying request');
  t.equal(await accountsWith('once@acme.example'), 1);
});

t.test('the replay is the first answer byte for byte', async (t) => {
  const form = 'type=express&email=bytes%40acme.example&metadata[order]=7';
  const first = await postForm('/v1/accounts', form, { 'idempotency-key': 'acct-bytes' });
  const firstText = await first.text();
  t.equal(first.status, 200);
  const again = await postForm('/v1/accounts', form, { 'idempotency-key': 'acct-bytes' });
  t.equal(again.status, 200);
  t.equal(await again.text(), firstText);
  t.equal(again.headers.get('content-type'), first.headers.get('content-type'));
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.equal(first.headers.get('idempotent-replayed'), null);
});

t.test('20 concurrent requests with one key create one account', async (t) => {
  const params = { type: 'express' as const, email: 'crowd@acme.example' };
  const accounts = await Promise.all(
    Array.from({ length: 20 }, () => stripe.accounts.create(params, { idempotencyKey: 'acct-crowd' })),
  );
  t.equal(new Set(accounts.map((a) => a.id)).size, 1, 'one id in every answer');
  t.equal(accounts.filter((a) => a.lastResponse.headers['idempotent-replayed'] === undefined).length, 1);
  t.equal(await accountsWith('crowd@acme.example'), 1);
});

t.test('without a key of its own the SDK sends a fresh one per call: two calls, two accounts', async (t) => {
  const params = { type: 'express' as const, email: 'twice@acme.example' };
  const a = await stripe.accounts.create(params);
  const b = await stripe.accounts.create(params);
  t.not(a.id, b.id);
  t.equal(await accountsWith('twice@acme.example'), 2);
});
