import t from 'tap';
import Stripe from 'stripe';
import { revokePlatformKey } from '../../scripts/admin/platform-keys.ts';
import { sleep } from '../helpers/platform.ts';
import { LIVE_CARD } from './live-processor.ts';
import { livemode, startPayments } from './setup.ts';

t.test(
  'platform keys: modes never mix, svc_ keys and sk_ keys stay on their own API, revoked keys are refused',
  async (t) => {
    const stack = await startPayments(t);
    const { baseUrl } = stack.platform;
    const merchant = await stack.platform.merchant();

    const testAccount = await stack.test.accounts.create({ email: 'test@example.com' });
    const liveAccount = await stack.live.accounts.create({ email: 'live@example.com' });
    t.equal(livemode(liveAccount), true);
    t.equal(livemode(testAccount), false);

    await t.rejects(stack.test.accounts.retrieve(liveAccount.id), {
      type: 'StripeInvalidRequestError',
      statusCode: 404,
      code: 'resource_missing',
      message: `No such account: '${liveAccount.id}'`,
    });
    await t.rejects(stack.live.accounts.retrieve(testAccount.id), { statusCode: 404, code: 'resource_missing' });
    t.same(
      (await stack.test.accounts.list()).data.map((a) => a.id),
      [testAccount.id],
    );
    t.same(
      (await stack.live.accounts.list()).data.map((a) => a.id),
      [liveAccount.id],
    );
    // Live payments (a live card: live mode has no test cards) and their ledger stay live: the test key finds none.
    const livePayment = await stack.live.paymentIntents.create({
      amount: 1500,
      currency: 'usd',
      payment_method: LIVE_CARD,
      confirm: true,
    });
    t.equal(livePayment.livemode, true);
    await t.rejects(stack.test.paymentIntents.retrieve(livePayment.id), { statusCode: 404, code: 'resource_missing' });
    await t.rejects(stack.test.paymentIntents.cancel(livePayment.id), { statusCode: 404, code: 'resource_missing' });
    t.same((await stack.test.paymentIntents.list()).data, []);
    t.same((await stack.test.balanceTransactions.list()).data, []);
    t.same((await stack.test.balance.retrieve()).pending, []);
    t.equal((await stack.live.balanceTransactions.list()).data.length, 1);
    // Acting for a live account with a test key: the account does not exist for this key.
    await t.rejects(stack.test.payouts.list({}, { stripeAccount: liveAccount.id }), {
      type: 'StripePermissionError',
      statusCode: 403,
      code: 'account_invalid',
    });

    // A merchant's svc_ key on /v1, a platform key on /api/v1, no key, a made-up key: 401 each.
    const svc = await fetch(`${baseUrl}/v1/accounts`, { headers: { authorization: `Bearer ${merchant.key}` } });
    t.equal(svc.status, 401);
    const svcBody = (await svc.json()) as { error: { type: string; message: string } };
    t.same(Object.keys(svcBody.error).sort(), ['message', 'type']);
    t.equal(svcBody.error.type, 'invalid_request_error');
    t.match(svcBody.error.message, /^Invalid API Key provided: /);
    t.notMatch(svcBody.error.message, merchant.key.slice(4, 20), 'the refused key is not echoed');

    const sk = await fetch(`${baseUrl}/api/v1/affiliates`, {
      headers: { authorization: `Bearer ${stack.testKey.key}` },
    });
    t.equal(sk.status, 401);
    t.equal(((await sk.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');

    const none = await fetch(`${baseUrl}/v1/accounts`);
    t.equal(none.status, 401);
    t.same(await none.json(), {
      error: {
        type: 'invalid_request_error',
        message:
          "You did not provide an API key. Provide your platform key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer sk_test_…').",
      },
    });
    t.ok(none.headers.get('request-id'), 'Request-Id as Stripe sends it');

    await t.rejects(Promise.resolve(stack.stripe(`sk_test_${'x'.repeat(43)}`).accounts.list()), {
      type: 'StripeAuthenticationError',
      statusCode: 401,
      message: /^Invalid API Key provided: sk_test_\*+xxxx$/,
    });

    // Revocation: refused within KEY_CACHE_MS (1 s).
    await revokePlatformKey(stack.platform.sql, stack.testKey.id);
    await sleep(1100);
    await t.rejects(Promise.resolve(stack.test.accounts.list()), {
      type: 'StripeAuthenticationError',
      statusCode: 401,
      message: /^Invalid API Key provided: sk_test_/,
      rawType: 'invalid_request_error',
    });
    const audit = await stack.platform
      .sql`select action from platform_key_audit where key_id = ${stack.testKey.id} order by id`;
    t.same(
      audit.map((r) => r['action']),
      ['created', 'revoked'],
    );
    const [stored] = await stack.platform
      .sql`select key_hash, prefix from platform_keys where id = ${stack.testKey.id}`;
    t.not(String(stored!['key_hash']), stack.testKey.key, 'only the hash is stored');
    t.equal(stored!['prefix'], stack.testKey.key.slice(0, 12));
    t.ok(Stripe, 'the official SDK');
  },
);

t.test('a platform key has a rate limit: over it, 429 with Retry-After', async (t) => {
  const stack = await startPayments(t);
  await stack.platform.sql`update platform_keys set rate_limit_per_min = 60 where id = ${stack.testKey.id}`;
  const statuses: number[] = [];
  let limited: Response | undefined;
  for (let i = 0; i < 61; i++) {
    const res = await fetch(`${stack.platform.baseUrl}/v1/accounts?limit=1`, {
      headers: { authorization: `Bearer ${stack.testKey.key}` },
    });
    statuses.push(res.status);
    if (res.status === 429) limited = res;
    else await res.arrayBuffer();
  }
  t.same(statuses, [...Array(60).fill(200), 429]);
  t.equal(limited!.headers.get('ratelimit-limit'), '60');
  t.ok(Number(limited!.headers.get('retry-after')) >= 1);
  const body = (await limited!.json()) as { error: { type: string; code: string } };
  t.equal(body.error.type, 'invalid_request_error');
  t.equal(body.error.code, 'rate_limit');
});
