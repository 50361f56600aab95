import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startPayments } from './setup.ts';

t.test('GET /v1/openapi: a valid OpenAPI 3.1 document of every /v1 operation, without a key', async (t) => {
  const stack = await startPayments(t);
  const res = await fetch(`${stack.platform.baseUrl}/v1/openapi`);
  t.equal(res.status, 200);
  const doc = (await res.json()) as {
    openapi: string;
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    components: { schemas: Record<string, unknown> };
  };
  t.equal(doc.openapi, '3.1.0');
  const result = await new Validator().validate(structuredClone(doc));
  t.same(result.errors ?? [], [], 'valid');
  t.ok(result.valid);
  t.same(Object.keys(doc.paths).sort(), [
    '/v1/account_links',
    '/v1/accounts',
    '/v1/accounts/{id}',
    '/v1/balance',
    '/v1/balance_transactions',
    '/v1/payment_intents',
    '/v1/payment_intents/{id}',
    '/v1/payment_intents/{id}/cancel',
    '/v1/payment_intents/{id}/capture',
    '/v1/payment_intents/{id}/confirm',
    '/v1/payouts',
    '/v1/payouts/{id}',
    '/v1/transactions',
  ]);
  t.ok(doc.paths['/v1/payment_intents']!['post']!.requestBody!.content['application/x-www-form-urlencoded']);
  for (const name of ['Account', 'PaymentIntent', 'Payout', 'BalanceTransaction', 'StripeError'])
    t.ok(doc.components.schemas[name], name);
});
