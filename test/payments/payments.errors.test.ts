import t from 'tap';
import { fundedAccount, startPayments, type PaymentsStack } from './setup.ts';

const call = async (
  stack: PaymentsStack,
  method: string,
  path: string,
  form?: string,
  headers: Record<string, string> = {},
) => {
  const res = await fetch(`${stack.platform.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.testKey.key}`,
      ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...headers,
    },
    body: form,
  });
  return { status: res.status, body: await res.json() };
};

t.test('refusals in Stripe\u2019s shape, with Stripe\u2019s statuses', async (t) => {
  const stack = await startPayments(t);

  t.same(await call(stack, 'POST', '/v1/payment_intents', 'currency=usd'), {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'parameter_missing',
        message: 'Missing required param: amount.',
        param: 'amount',
      },
    },
  });
  t.same(await call(stack, 'POST', '/v1/payment_intents', 'amount=12x&currency=usd'), {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'parameter_invalid_integer',
        message: 'Invalid integer: amount',
        param: 'amount',
      },
    },
  });
  t.same(await call(stack, 'POST', '/v1/payment_intents', 'amount=100&currency=usd&colour=red'), {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'parameter_unknown',
        message: 'Received unknown parameter: colour',
        param: 'colour',
      },
    },
  });
  t.same(
    await call(
      stack,
      'POST',
      '/v1/payment_intents',
      'amount=100&currency=usd&transfer_data[destination]=acct_x&transfer_data[bank]=x',
    ),
    {
      status: 400,
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'parameter_unknown',
          message: 'Received unknown parameter: transfer_data[bank]',
          param: 'transfer_data[bank]',
        },
      },
    },
  );
  t.same(await call(stack, 'POST', '/v1/payment_intents', 'amount=100&currency=xyz'), {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        message: 'Invalid currency: xyz.',
        param: 'currency',
      },
    },
  });
  t.same(
    await call(
      stack,
      'POST',
      '/v1/payment_intents',
      'amount=100&currency=usd&payment_method=pm_card_nope&confirm=true',
    ),
    {
      status: 400,
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: "No such PaymentMethod: 'pm_card_nope'",
          param: 'payment_method',
        },
      },
    },
  );
  t.same(
    await call(stack, 'POST', '/v1/payment_intents', 'amount=100&currency=usd&transfer_data[destination]=acct_nope'),
    {
      status: 400,
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: "No such destination: 'acct_nope'",
          param: 'transfer_data[destination]',
        },
      },
    },
  );
  t.same(await call(stack, 'POST', '/v1/payment_intents', 'amount=100&currency=usd&metadata[a][b]=1'), {
    status: 400,
    body: {
      error: { type: 'invalid_request_error', message: 'Invalid metadata[a]: must be string', param: 'metadata[a]' },
    },
  });
  t.same(await call(stack, 'POST', '/v1/payment_intents', 'amount=100&currency=usd&metadata[a]=1&metadata=2'), {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        message: 'Invalid parameter name or nesting: metadata',
        param: 'metadata',
      },
    },
  });
  t.same(await call(stack, 'GET', '/v1/payment_intents/pi_nope'), {
    status: 404,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: "No such payment_intent: 'pi_nope'",
        param: 'intent',
      },
    },
  });
  const json = await fetch(`${stack.platform.baseUrl}/v1/payment_intents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.testKey.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ amount: 100, currency: 'usd' }),
  });
  t.equal(json.status, 400);
  t.same(await json.json(), {
    error: {
      type: 'invalid_request_error',
      message: 'Invalid request: the body must be form-encoded (application/x-www-form-urlencoded), not JSON.',
    },
  });
  t.same(await call(stack, 'GET', '/v1/charges'), {
    status: 404,
    body: { error: { type: 'invalid_request_error', message: 'Unrecognized request URL (GET: /v1/charges).' } },
  });
  t.same(await call(stack, 'GET', '/v1/payouts?limit=500'), {
    status: 400,
    body: { error: { type: 'invalid_request_error', message: 'Invalid limit: must be <= 100', param: 'limit' } },
  });
  t.same(await call(stack, 'GET', '/v1/payouts?starting_after=po_nope'), {
    status: 400,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: "No such object: 'po_nope'",
        param: 'starting_after',
      },
    },
  });
  t.same(await call(stack, 'GET', '/v1/payouts', undefined, { 'stripe-account': 'not-an-account' }), {
    status: 403,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'account_invalid',
        message: "The provided key does not have access to account 'not-an-account' (or that account does not exist).",
      },
    },
  });

  // Accounts and their links: a merchant link (a live key's) must name a merchant; links lead only to http(s)
  // addresses.
  const live = { authorization: `Bearer ${stack.liveKey.key}` };
  t.same(await call(stack, 'POST', '/v1/accounts', 'metadata[merchant_id]=mer_nope', live), {
    status: 400,
    body: {
      error: { type: 'invalid_request_error', message: "No such merchant: 'mer_nope'", param: 'metadata[merchant_id]' },
    },
  });
  const acct = await stack.test.accounts.create({ type: 'express' });
  const link = (returnUrl: string) =>
    call(
      stack,
      'POST',
      '/v1/account_links',
      new URLSearchParams({
        account: acct.id,
        type: 'account_onboarding',
        refresh_url: 'https://p.example/r',
        return_url: returnUrl,
      }).toString(),
    );
  t.match(await link('javascript:alert(1)'), { status: 400, body: { error: { param: 'return_url' } } });
  t.match(await link('https://p.example/done'), { status: 200, body: { object: 'account_link' } });
  t.same(
    await call(
      stack,
      'POST',
      '/v1/account_links',
      'account=acct_nope&type=account_onboarding&refresh_url=https://a.example&return_url=https://a.example',
    ),
    {
      status: 400,
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: "No such account: 'acct_nope'",
          param: 'account',
        },
      },
    },
  );

  // State: a succeeded intent cannot be canceled, captured or confirmed again.
  const paid = await stack.test.paymentIntents.create({
    amount: 500,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
  });
  const cancel = await call(stack, 'POST', `/v1/payment_intents/${paid.id}/cancel`, '');
  t.equal(cancel.status, 400);
  t.match(cancel.body, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state' } });
  await t.rejects(stack.test.paymentIntents.capture(paid.id), {
    code: 'payment_intent_unexpected_state',
    statusCode: 400,
    message:
      'You cannot capture this PaymentIntent because it has a status of succeeded. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.',
  });
  await t.rejects(stack.test.paymentIntents.confirm(paid.id), {
    code: 'payment_intent_unexpected_state',
    statusCode: 400,
  });
  const held = await stack.test.paymentIntents.create({
    amount: 500,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    capture_method: 'manual',
    confirm: true,
  });
  await t.rejects(stack.test.paymentIntents.capture(held.id, { amount_to_capture: 501 }), { code: 'amount_too_large' });
  await t.rejects(
    stack.test.paymentIntents.confirm((await stack.test.paymentIntents.create({ amount: 5, currency: 'usd' })).id),
    {
      code: 'payment_intent_unexpected_state',
      message: /missing a payment method/,
    },
  );

  // Payouts: not before onboarding; not more than the available balance.
  const fresh = await stack.test.accounts.create({ type: 'express' });
  await t.rejects(stack.test.payouts.create({ amount: 100, currency: 'usd' }, { stripeAccount: fresh.id }), {
    code: 'payouts_not_allowed',
    statusCode: 400,
  });
  const funded = await fundedAccount(stack, 1000);
  await t.rejects(stack.test.payouts.create({ amount: 1001, currency: 'usd' }, { stripeAccount: funded.id }), {
    code: 'balance_insufficient',
    statusCode: 400,
  });
  await t.rejects(stack.test.payouts.create({ amount: 10, currency: 'eur' }, { stripeAccount: funded.id }), {
    code: 'balance_insufficient',
  });
});

t.test("one connected account's objects are not another's, nor the platform's", async (t) => {
  const stack = await startPayments(t);
  const a = await fundedAccount(stack, 1000);
  const b = await stack.test.accounts.create({ type: 'express' });
  const direct = await stack.test.paymentIntents.create(
    { amount: 300, currency: 'usd', payment_method: 'pm_card_visa', confirm: true },
    { stripeAccount: a.id },
  );
  const payout = await stack.test.payouts.create({ amount: 100, currency: 'usd' }, { stripeAccount: a.id });
  for (const scope of [{ stripeAccount: b.id }, {}]) {
    await t.rejects(stack.test.paymentIntents.retrieve(direct.id, {}, scope), {
      statusCode: 404,
      code: 'resource_missing',
    });
    await t.rejects(stack.test.payouts.retrieve(payout.id, {}, scope), { statusCode: 404, code: 'resource_missing' });
    await t.rejects(stack.test.paymentIntents.cancel(direct.id, {}, scope), {
      statusCode: 404,
      code: 'resource_missing',
    });
    t.same((await stack.test.payouts.list({}, scope)).data, []);
    t.same((await stack.test.balanceTransactions.list({ source: payout.id }, scope)).data, []);
  }
});
