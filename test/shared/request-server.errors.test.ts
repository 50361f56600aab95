import t from 'tap';
import { randomBytes } from 'node:crypto';
import { RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { connectNats, decodeJson, encodeJson } from '@platform/shared/nats';
import { invalidRequest } from '@platform/shared/payments/errors';
import { serveRequests } from '@platform/shared/request-server';
import { stripeErrors } from '@platform/payments/stripe-errors';
import { Registry } from 'prom-client';
import { captureLogger, createTestNats, NATS_URL } from '../helpers/platform.ts';

/**
 * The request server with a surface's own error format (the /v1 surface's Stripe errors). The payments service used
 * to answer from its own server, whose `respond` threw when a reply could not be sent (larger than NATS's
 * max_payload): the rejection escaped the request, no answer went, and the caller waited out its deadline. Now such
 * a reply is answered with the surface's INTERNAL error, as every server's is.
 */
const bus = await createTestNats(t);
const service = await connectNats(NATS_URL, 'request-server-test');
t.teardown(() => service.close());

const logger = captureLogger('payments');
const registry = new Registry();
const subject = (name: string) => `${bus.prefix}.rpc.payments.${name}`;
const server = serveRequests({
  nc: service,
  routes: [
    {
      subject: subject('large'),
      queue: 'payments',
      name: 'large',
      run: async () => ({ outcome: 'ok', body: { padding: 'x'.repeat(2 * 1024 * 1024) } }),
    },
    {
      subject: subject('refused'),
      queue: 'payments',
      name: 'refused',
      run: () => Promise.reject(invalidRequest('No such payout', { code: 'resource_missing', status: 404 })),
    },
    { subject: subject('small'), queue: 'payments', name: 'small', run: async () => ({ outcome: 'ok', body: {} }) },
  ],
  log: logger.log,
  registry,
  metrics: {
    label: 'operation',
    total: { name: 'test_requests_total', help: 'Requests' },
    duration: { name: 'test_request_duration_seconds', help: 'Time' },
  },
  errors: stripeErrors,
});
t.teardown(() => server.stop());
await service.flush();

const ask = (name: string, deadline = Date.now() + 5000) =>
  bus.nc.request(subject(name), encodeJson({ request_id: `req_${randomBytes(6).toString('hex')}`, deadline }), {
    timeout: 3000,
  });

t.test("a reply too large to send answers the surface's INTERNAL error; the answers beside it still go", async (t) => {
  const [large, small] = await Promise.all([ask('large'), ask('small')]);
  t.equal(large.headers?.get(RPC_OUTCOME_HEADER), 'error');
  t.same(decodeJson(large.data), {
    status: 500,
    error: { type: 'api_error', message: 'Something went wrong on our side' },
  });
  t.equal(small.headers?.get(RPC_OUTCOME_HEADER), 'ok', 'the answer sent in the same turn');
});

t.test('a refusal is answered in the format passed in', async (t) => {
  const refused = await ask('refused');
  t.equal(refused.headers?.get(RPC_OUTCOME_HEADER), 'error');
  t.same(decodeJson(refused.data), {
    status: 404,
    error: { type: 'invalid_request_error', message: 'No such payout', code: 'resource_missing' },
  });
});

t.test('a request that arrives past its deadline is dropped unanswered and counted EXPIRED', async (t) => {
  await t.rejects(ask('small', Date.now() - 1), 'no answer');
  const total = await registry.getSingleMetricAsString('test_requests_total');
  t.match(total, /test_requests_total\{operation="small",code="EXPIRED"\} 1/);
  t.match(total, /test_requests_total\{operation="refused",code="resource_missing"\} 1/);
});
