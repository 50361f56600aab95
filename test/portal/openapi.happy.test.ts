import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { portalDocument } from '@platform/gateway/http/openapi/documents';
import { portalSpecs } from '@platform/gateway/surfaces/portal/specs';
import { approvedAffiliate, portal, signIn, startPortalPlatform } from './backend.ts';

type Json = Record<string, any>;

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv2020,
) => Ajv2020;

const { platform } = await startPortalPlatform(t, { commissions: true });
const base = platform.baseUrl;
const res = await fetch(`${base}/portal/api/openapi`);
const doc = (await res.json()) as Json;

t.test('GET /portal/api/openapi: the document the client is generated from, public', async (t) => {
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type') ?? '', /^application\/json/);
  t.same(doc, portalDocument(), 'served as the build generates it');
  t.equal(doc['openapi'], '3.1.0');
  t.match(doc['components']['securitySchemes']['session'], { type: 'apiKey', in: 'cookie', name: 'portal_session' });
});

t.test('it is a valid OpenAPI 3.1 document', async (t) => {
  const result = await new Validator().validate(structuredClone(doc));
  t.same(result.errors ?? [], [], 'valid');
  t.ok(result.valid);
});

t.test('every route of the portal is in it, and nothing else', async (t) => {
  const documented = Object.entries(doc['paths'] as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, op]) => `${method} ${path} ${(op as Json)['operationId']}`),
  );
  const specs = Object.values(portalSpecs).map((s) => `${s.method} ${s.path} ${s.operationId}`);
  t.same(documented.sort(), specs.sort());
  for (const s of Object.values(portalSpecs)) {
    const op = doc['paths'][s.path][s.method] as Json;
    t.same(op['security'], s.auth === 'session' ? [{ session: [] }] : [], `${s.operationId}: who may call`);
    t.ok(op['responses'][String(s.success.status)], `${s.operationId}: ${s.success.status} documented`);
    t.ok(op['responses']['default'], `${s.operationId}: the error envelope`);
    t.equal(Boolean(op['requestBody']), s.body !== null, `${s.operationId}: a body exactly when it takes one`);
  }
});

t.test("the portal's answers are what the document says", async (t) => {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema(doc, 'portal');
  const check = (method: string, path: string, status: number, body: unknown) => {
    const responses = doc['paths'][path][method]['responses'];
    t.ok(responses[String(status)], `${method} ${path}: ${status} documented`);
    const ref = `portal#/paths/${path.replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    t.ok(validate(body), `${method} ${path}: ${JSON.stringify(validate.errors)}`);
  };
  const m = await platform.merchant({ name: 'Acme' });
  const email = `doc-${Date.now()}@example.com`;
  await approvedAffiliate(m, email);
  const asked = await portal(base, null, 'POST', '/portal/api/sign-in', { email });
  check('post', '/portal/api/sign-in', asked.status, asked.body);
  const s = await signIn(base, email);
  for (const path of [
    '/portal/api/session',
    '/portal/api/home',
    '/portal/api/performance',
    '/portal/api/commissions',
    '/portal/api/payouts',
    '/portal/api/team',
    '/portal/api/payout-settings',
  ]) {
    const got = await portal(base, s, 'GET', path);
    check('get', path, got.status, got.body);
  }
  const link = await portal(base, s, 'POST', '/portal/api/payout-settings/link');
  check('post', '/portal/api/payout-settings/link', link.status, link.body);
});
