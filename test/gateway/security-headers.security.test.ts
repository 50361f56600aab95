import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import t from 'tap';
import { newId } from '@platform/shared/ids';
import { startPlatform } from '../helpers/platform.ts';

/**
 * helmet's headers on every kind of gateway response: answers forwarded from a service, the gateway's own errors
 * (before and after authentication), unknown routes, the OpenAPI document and the health check. The reference is
 * helmet's own middleware on a bare express app, so the test names no header value of its own.
 */
const platform = await startPlatform(t);
const { client } = await platform.merchant();

const reference = express();
reference.use(helmet());
reference.get('/', (_req, res) => void res.json({}));
const server = reference.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
t.teardown(() => new Promise((resolve) => server.close(resolve)));
const referenceResponse = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
await referenceResponse.text();

/** Every header helmet's middleware set on the reference response (what express and node set themselves is left out). */
const helmetHeaders = [...referenceResponse.headers].filter(
  ([name]) => !['content-type', 'content-length', 'etag', 'date', 'connection', 'keep-alive'].includes(name),
);

t.test("helmet's own middleware sets headers the gateway must carry", async (t) => {
  const names = helmetHeaders.map(([name]) => name);
  t.ok(names.includes('content-security-policy'), 'content-security-policy');
  t.ok(names.includes('strict-transport-security'), 'strict-transport-security');
  t.ok(names.includes('x-content-type-options'), 'x-content-type-options');
  t.ok(names.length >= 10, `${names.length} headers`);
});

t.test("every kind of response carries helmet's headers with helmet's values", async (t) => {
  const responses = {
    'list 200': await client.get('/api/v1/affiliates'),
    'create 201': await client.post('/api/v1/affiliates', { email: 'headers@example.com' }),
    'unknown affiliate 404': await client.get(`/api/v1/affiliates/${newId('aff')}`),
    'bad limit 400': await client.get('/api/v1/affiliates?limit=0'),
    'no key 401': await platform.client().get('/api/v1/affiliates'),
    'unknown route 404': await platform.client().get('/nope'),
    openapi: await platform.client().get('/api/v1/openapi'),
    healthz: await platform.client().get('/healthz'),
  };
  t.same(
    Object.values(responses).map((r) => r.status),
    [200, 201, 404, 400, 401, 404, 200, 200],
  );
  for (const [what, res] of Object.entries(responses)) {
    for (const [name, value] of helmetHeaders) t.equal(res.headers.get(name), value, `${what}: ${name}`);
    t.equal(res.headers.get('x-powered-by'), null, `${what}: no x-powered-by`);
  }
});

t.test('a service answer keeps its JSON content type and exact length', async (t) => {
  const res = await client.get('/api/v1/affiliates');
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(Number(res.headers.get('content-length')), Buffer.byteLength(res.text));
});
