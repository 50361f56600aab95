import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { apiV1Document as buildOpenApi } from '@platform/gateway/http/openapi/documents';
import { operations } from '@platform/shared/api';
import { ERROR_CODES } from '@platform/shared/errors';
import { ApiClient, checkAgainstOpenApi } from '../helpers/client.ts';
import { startPlatform } from '../helpers/platform.ts';

type Json = Record<string, any>;

const platform = await startPlatform(t);

/** The twelve webhook event types, written out here so that a drift in the catalogue shows. */
const WEBHOOK_TYPES = [
  'affiliate.created',
  'affiliate.approved',
  'affiliate.suspended',
  'affiliate.tier_promoted',
  'commission.created',
  'commission.approved',
  'commission.voided',
  'payout.sent',
  'payout.paid',
  'payout.failed',
  'fraud.flagged',
  'tax_form.submitted',
];

const res = await fetch(`${platform.baseUrl}/api/v1/openapi`);
const text = await res.text();
const doc = JSON.parse(text) as Json;

/** Follows a local "#/…" reference. */
function deref(node: Json): Json {
  if (typeof node?.['$ref'] !== 'string') return node;
  const parts = node['$ref']
    .replace(/^#\//, '')
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out: any = doc;
  for (const p of parts) out = out?.[p];
  if (out === undefined) throw new Error(`unresolvable $ref ${node['$ref']}`);
  return deref(out);
}

t.test('GET /api/v1/openapi is public JSON', async (t) => {
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type') ?? '', /^application\/json/);
  t.match(res.headers.get('x-request-id') ?? '', /^req_/);
  t.equal(doc['openapi'], '3.1.0');
  // With a key it is the same document; a bad key does not matter either.
  const { key } = await platform.merchant();
  t.same(
    await (await fetch(`${platform.baseUrl}/api/v1/openapi`, { headers: { authorization: `Bearer ${key}` } })).json(),
    doc,
  );
  t.equal(
    (await fetch(`${platform.baseUrl}/api/v1/openapi`, { headers: { authorization: 'Bearer nope' } })).status,
    200,
  );
  // The document the response checker uses is the one served.
  t.same(doc, JSON.parse(JSON.stringify(buildOpenApi())));
});

t.test('it is a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  t.equal(result.valid, true, `valid (errors: ${JSON.stringify(result.errors)?.slice(0, 2000)})`);
  t.equal(validator.version, '3.1');
  // Every internal reference resolves.
  const refs: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') refs.push(x);
        else walk(x);
      }
    }
  };
  walk(doc);
  t.ok(refs.length > 0);
  for (const ref of new Set(refs)) {
    t.match(ref, /^#\//, `${ref} is local`);
    t.doesNotThrow(() => deref({ $ref: ref }), `${ref} resolves`);
  }
});

t.test('the bearer security scheme applies to every API operation', async (t) => {
  t.match(doc['components']['securitySchemes']['bearer'], { type: 'http', scheme: 'bearer' });
  for (const op of operations)
    t.same(doc['paths'][op.path]?.[op.method]?.['security'], [{ bearer: [] }], `${op.operationId} needs the key`);
  t.same(doc['paths']['/api/v1/openapi']['get']['security'], [], 'the document itself is public');
});

t.test('every operation of the catalogue is documented, and nothing else', async (t) => {
  const documented = Object.entries(doc['paths'] as Json).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m} ${path}`),
  );
  const tracking = [
    'get /r/{merchant_id}/{slug}',
    'get /r/{slug}',
    'get /t/script.js',
    'post /t/visit',
    'options /t/visit',
  ];
  const onboardingPage = ['get /onboarding/{token}', 'post /onboarding/{token}'];
  const programmePage = ['get /p/{slug}', 'post /p/{slug}'];
  const expected = [
    ...operations.map((o) => `${o.method} ${o.path}`),
    'get /api/v1/openapi',
    ...tracking,
    ...onboardingPage,
    ...programmePage,
  ];
  t.same(documented.sort(), expected.sort());
  const ids = documented.map((d) => doc['paths'][d.split(' ')[1]!][d.split(' ')[0]!]['operationId']);
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');

  for (const op of operations) {
    const entry = doc['paths'][op.path][op.method] as Json;
    t.equal(entry['operationId'], op.operationId);
    const params = (entry['parameters'] ?? []) as Json[];
    for (const name of Object.keys(op.params.properties)) {
      t.match(
        params.find((p) => p['name'] === name && p['in'] === 'path'),
        { required: true },
        `${op.operationId}: path parameter ${name}`,
      );
    }
    for (const name of Object.keys(op.query.properties)) {
      t.ok(
        params.find((p) => p['name'] === name && p['in'] === 'query'),
        `${op.operationId}: query parameter ${name}`,
      );
    }
    if (op.body)
      t.ok(entry['requestBody']?.['content']?.['application/json']?.['schema'], `${op.operationId}: JSON request body`);
    else t.notOk(entry['requestBody'], `${op.operationId}: no request body`);
    for (const s of op.success) {
      const response = entry['responses'][String(s.status)];
      t.ok(response, `${op.operationId}: ${s.status} documented`);
      for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id']) {
        t.ok(deref(response['headers']?.[h] ?? {})['schema'], `${op.operationId} ${s.status}: header ${h}`);
      }
    }
  }
});

t.test('the public tracking routes are documented without a key, with their own 429', async (t) => {
  for (const [path, method] of [
    ['/r/{merchant_id}/{slug}', 'get'],
    ['/r/{slug}', 'get'],
    ['/t/script.js', 'get'],
    ['/t/visit', 'post'],
    ['/t/visit', 'options'],
  ] as const) {
    const entry = doc['paths'][path][method] as Json;
    t.same(entry['security'], [], `${method} ${path} is public`);
    t.same(entry['tags'], ['Tracking']);
  }
  for (const path of ['/r/{merchant_id}/{slug}', '/r/{slug}']) {
    const responses = doc['paths'][path]['get']['responses'] as Json;
    t.same(Object.keys(responses).sort(), ['302', '404', '429', '503'], `${path}: responses`);
    t.ok(
      responses['302']['headers']['Location'] && responses['302']['headers']['Set-Cookie'],
      `${path}: redirect with the cookie`,
    );
  }
  const visit = doc['paths']['/t/visit']['post'] as Json;
  t.same(Object.keys(visit['responses']).sort(), ['200', '201', '400', '404', '413', '415', '429', '503']);
  t.same(deref(visit['requestBody']['content']['application/json']['schema'])['required'].sort(), [
    'merchant_id',
    'via',
  ]);
  t.same(Object.keys(deref(visit['responses']['201']['content']['application/json']['schema'])['properties']).sort(), [
    'max_age_seconds',
    'visit_id',
  ]);
  t.match(deref(visit['responses']['429'])['description'], /^RATE_LIMITED: /);
  t.same(
    deref(visit['responses']['429']['content']['application/json']['schema']),
    deref({ $ref: '#/components/schemas/Error' }),
  );
});

t.test('every error response is documented with the error envelope', async (t) => {
  const envelope = deref({ $ref: '#/components/schemas/Error' });
  const codes = envelope['properties']['error']['properties']['code'];
  const listed = (codes['anyOf'] ?? codes['oneOf'] ?? []).map((c: Json) => c['const']);
  t.same(listed.sort(), [...ERROR_CODES].sort(), 'the code enumerates every error code');
  t.same(envelope['properties']['error']['required'].sort(), ['code', 'message', 'request_id']);

  const expectedStatus: Record<string, string> = {
    '400': 'INVALID_INPUT',
    '401': 'UNAUTHORIZED',
    '402': 'PLAN_REQUIRED',
    '403': 'FORBIDDEN',
    '404': 'NOT_FOUND',
    '409': 'CONFLICT',
    '413': 'INVALID_INPUT',
    '415': 'INVALID_INPUT',
    '429': 'RATE_LIMITED',
    '500': 'INTERNAL',
    '503': 'UNAVAILABLE',
  };
  for (const op of operations) {
    const responses = doc['paths'][op.path][op.method]['responses'] as Json;
    const statuses = ['400', '401', '402', '403', '429', '500', '503'];
    if (Object.keys(op.params.properties).length > 0) statuses.push('404');
    if (op.body) statuses.push('413', '415');
    for (const status of statuses) {
      const response = responses[status];
      t.ok(response, `${op.operationId}: ${status} documented`);
      if (!response) continue;
      const resolved = deref(response);
      t.same(
        resolved['content']['application/json']['schema'],
        { $ref: '#/components/schemas/Error' },
        `${op.operationId} ${status}: the envelope`,
      );
      t.match(
        resolved['description'],
        new RegExp(`^${expectedStatus[status]}`),
        `${op.operationId} ${status}: names ${expectedStatus[status]}`,
      );
    }
  }
  t.match(deref({ $ref: '#/components/responses/E429' })['headers'], { 'RateLimit-Limit': {}, 'RateLimit-Reset': {} });
});

t.test('the twelve webhook event types are under webhooks', async (t) => {
  t.same(Object.keys(doc['webhooks']).sort(), [...WEBHOOK_TYPES].sort());
  for (const type of WEBHOOK_TYPES) {
    const post = doc['webhooks'][type]?.['post'] as Json;
    const schema = deref(post['requestBody']['content']['application/json']['schema']);
    t.match(schema['properties']['type'], { const: type }, `${type}: the envelope type`);
    t.same(
      Object.keys(schema['properties']).sort(),
      ['created_at', 'data', 'id', 'merchant_id', 'type'],
      `${type}: the envelope fields`,
    );
    t.ok(
      deref(schema['properties']['data'])['type'] || deref(schema['properties']['data'])['anyOf'],
      `${type}: a data schema`,
    );
    const headers = (post['parameters'] as Json[]).map((p) => `${p['in']}:${p['name']}`).sort();
    t.same(
      headers,
      ['header:webhook-id', 'header:webhook-signature', 'header:webhook-timestamp'],
      `${type}: Standard Webhooks headers`,
    );
  }
});

t.test('the response checker used by every test can fail', async (t) => {
  const affiliate = {
    id: 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c',
    slug: 'jane-doe',
    email: 'jane@example.com',
    display_name: 'Jane',
    status: 'approved',
    tier_id: null,
    parent_id: null,
    lifetime_commissions_paid: 0,
    custom_commission_rate: null,
    referral_url: 'https://track.example.com/r/jane-doe',
    created_at: '2026-11-22T09:53:01.789Z',
    updated_at: '2026-11-22T09:53:01.789Z',
  };
  const envelope = { error: { code: 'NOT_FOUND', message: 'No such affiliate', request_id: 'req_1' } };
  // Conforming bodies pass, so that the failures below fail for the body and not for the setup.
  t.doesNotThrow(() => checkAgainstOpenApi('GET', '/api/v1/affiliates', 200, { data: [affiliate], next_cursor: null }));
  t.doesNotThrow(() => checkAgainstOpenApi('GET', `/api/v1/affiliates/${affiliate.id}`, 200, affiliate));
  t.doesNotThrow(() => checkAgainstOpenApi('GET', `/api/v1/affiliates/${affiliate.id}`, 404, envelope));

  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 200, { data: 'nope', next_cursor: null }),
    /does not match/,
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 200, { data: [] }),
    /does not match/,
    'a required field missing',
  );
  t.throws(
    () =>
      checkAgainstOpenApi('GET', `/api/v1/affiliates/${affiliate.id}`, 200, { ...affiliate, tin_vault_id: 'vault_1' }),
    /does not match/,
    'a hidden field leaking',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', `/api/v1/affiliates/${affiliate.id}`, 200, { ...affiliate, status: 'deleted' }),
    /does not match/,
    'an unknown status',
  );
  t.throws(
    () =>
      checkAgainstOpenApi('GET', `/api/v1/affiliates/${affiliate.id}`, 200, { ...affiliate, created_at: 'yesterday' }),
    /does not match/,
    'a bad timestamp',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 404, { error: { code: 'NOT_FOUND', message: 'x' } }),
    /does not match/,
    'an error without request_id',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 400, { error: { ...envelope.error, code: 'TEAPOT' } }),
    /does not match/,
    'an unknown error code',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 400, { message: 'bad' }),
    /does not match/,
    'not the envelope',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/nowhere', 404, 'Not Found'),
    /does not match/,
    'an unrouted error that is not the envelope',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 201, { data: [], next_cursor: null }),
    /does not list/,
    'an undocumented success status',
  );
  t.throws(
    () => checkAgainstOpenApi('GET', '/api/v1/affiliates', 409, { error: { ...envelope.error, code: 'CONFLICT' } }),
    /does not list/,
    'an undocumented error status',
  );

  // And the client applies it to what a server really sends.
  const bad = createServer((_req, r) => {
    r.writeHead(200, { 'content-type': 'application/json' });
    r.end(JSON.stringify({ data: [{ id: 1 }], next_cursor: null }));
  });
  await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => bad.close(() => resolve())));
  const client = new ApiClient(`http://127.0.0.1:${(bad.address() as AddressInfo).port}`, 'svc_x');
  await t.rejects(client.get('/api/v1/affiliates'), /does not match/);
  t.equal(
    (await client.get('/api/v1/affiliates', { skipSchemaCheck: true })).status,
    200,
    'only the check made it fail',
  );
});

t.test('servers names the gateway; webhook bodies are named components with one union', async (t) => {
  t.same(doc['servers'], [{ url: 'http://localhost:8080', description: 'the platform gateway (PUBLIC_BASE_URL)' }]);
  t.same(buildOpenApi('https://api.example.com')['servers'], [
    { url: 'https://api.example.com', description: 'the platform gateway (PUBLIC_BASE_URL)' },
  ]);
  const schemas = (doc['components'] as { schemas: Record<string, any> }).schemas;
  const webhooks = doc['webhooks'] as Record<string, any>;
  const union = schemas['WebhookEvent'];
  t.equal(union.oneOf.length, Object.keys(webhooks).length, 'one member per event type');
  for (const [type, webhook] of Object.entries(webhooks)) {
    const ref = webhook.post.requestBody.content['application/json'].schema.$ref as string;
    t.equal(union.discriminator.mapping[type], ref, `${type}: the union maps its type to its component`);
    const component = schemas[ref.replace('#/components/schemas/', '')];
    t.same(component.properties.type, { const: type, type: 'string' }, `${type}: its component is its envelope`);
  }
  t.equal(
    webhooks['affiliate.tier_promoted'].post.requestBody.content['application/json'].schema.$ref,
    '#/components/schemas/AffiliateTierPromotedEvent',
  );
});
