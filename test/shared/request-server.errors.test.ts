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

t.test(
  'past its limit of requests in flight a server answers UNAVAILABLE at once, then takes work again',
  async (t) => {
    const capped = await connectNats(NATS_URL, 'request-server-capped');
    t.teardown(() => capped.close());
    const cappedRegistry = new Registry();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const server = serveRequests({
      nc: capped,
      routes: [
        {
          subject: subject('slow'),
          queue: 'capped',
          name: 'slow',
          run: async () => {
            started++;
            await held;
            return { outcome: 'ok', body: { done: true } };
          },
        },
      ],
      log: logger.log,
      registry: cappedRegistry,
      metrics: {
        label: 'operation',
        total: { name: 'capped_requests_total', help: 'Requests' },
        duration: { name: 'capped_request_duration_seconds', help: 'Time' },
      },
      maxInFlight: 2,
    });
    t.teardown(() => server.stop());
    await capped.flush();

    const first = [ask('slow'), ask('slow')];
    await bus.nc.flush();
    // Both taken (and held) before the next ones arrive.
    for (let i = 0; started < 2 && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(started, 2, 'two requests are worked on');
    const refused = await Promise.all([ask('slow'), ask('slow'), ask('slow')]);
    for (const answer of refused) {
      t.equal(answer.headers?.get(RPC_OUTCOME_HEADER), 'error');
      t.same(decodeJson(answer.data), {
        code: 'UNAVAILABLE',
        message: 'The service is temporarily unavailable; try again',
      });
    }
    t.equal(started, 2, 'the refused ones were never started');
    release();
    for (const answer of await Promise.all(first)) t.same(decodeJson(answer.data), { done: true });
    const again = await ask('slow');
    t.same(decodeJson(again.data), { done: true }, 'once below the limit, a request is worked on again');
    const total = await cappedRegistry.getSingleMetricAsString('capped_requests_total');
    t.match(total, /capped_requests_total\{operation="slow",code="UNAVAILABLE"\} 3/);
  },
);
