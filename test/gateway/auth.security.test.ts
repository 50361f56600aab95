import { randomBytes } from 'node:crypto';
import t from 'tap';
import { operations, type ApiOperation } from '@platform/shared/api';
import { newId } from '@platform/shared/ids';
import { createKey, revokeKey, setPlan } from '../../scripts/admin/commands.ts';
import type { ApiClient, ApiResponse } from '../helpers/client.ts';
import { sleep, startPlatform } from '../helpers/platform.ts';
import { assertError, rateHeaders, type Asserts } from './expect.ts';

// Two gateway replicas: revocation and plan changes must reach every replica within a second.
const platform = await startPlatform(t, { gateways: 2 });
const gatewayUrls = platform.gateways.map((g) => `http://127.0.0.1:${g.port}`);
/** Key lookups are cached for at most a second; waiting a little longer must be enough on every replica. */
const PROPAGATION_MS = 1100;

let seq = 0;
const email = () => `gw-auth-${++seq}-${randomBytes(3).toString('hex')}@example.com`;

/** A request every catalogue operation accepts when the caller is entitled: a valid body, a well-formed id. */
function sampleRequest(op: ApiOperation, affiliateId: string): { path: string; body?: unknown } {
  const path = op.path.replace(/\{[a-z_]+\}/g, affiliateId);
  if (!op.body) return { path };
  if (op.operationId === 'createAffiliate') return { path, body: { email: email() } };
  if (op.operationId === 'updateAffiliate') return { path, body: { display_name: 'Renamed' } };
  return { path, body: {} };
}

const call = (client: ApiClient, op: ApiOperation, req: { path: string; body?: unknown }) =>
  client.request(op.method.toUpperCase(), req.path, req.body === undefined ? {} : { body: req.body });

function assertUnauthorized(t: Asserts, res: ApiResponse) {
  assertError(t, res, 401, 'UNAUTHORIZED');
  t.match(res.headers.get('www-authenticate') ?? '', /^Bearer/, 'WWW-Authenticate: Bearer…');
}

t.test('missing, malformed and unknown keys are 401 UNAUTHORIZED with WWW-Authenticate: Bearer', async (t) => {
  const { key } = await platform.merchant();
  const anon = platform.client();
  const unknownWellFormed = `svc_${randomBytes(32).toString('base64url')}`;
  const headers: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['Bearer abc', { authorization: 'Bearer abc' }],
    ['Basic x', { authorization: 'Basic x' }],
    ['Bearer svc_short', { authorization: 'Bearer svc_short' }],
    ['Bearer without a value', { authorization: 'Bearer' }],
    ['the key without the Bearer scheme', { authorization: key }],
    ['another scheme with a valid key', { authorization: `Token ${key}` }],
    ['a valid key followed by junk', { authorization: `Bearer ${key} extra` }],
    [
      'a valid key with one character changed',
      { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` },
    ],
    ['an unknown well-formed key', { authorization: `Bearer ${unknownWellFormed}` }],
    [
      'a well-formed key with the wrong prefix',
      { authorization: `Bearer sk_live_${randomBytes(32).toString('base64url')}` },
    ],
  ];
  for (const [label, h] of headers) {
    for (const url of gatewayUrls) {
      t.test(`${label} (${url})`, async (t) => {
        assertUnauthorized(t, await platform.client(undefined, url).get('/api/v1/affiliates', { headers: h }));
        assertUnauthorized(
          t,
          await platform.client(undefined, url).post('/api/v1/affiliates', { email: email() }, { headers: h }),
        );
      });
    }
  }
  t.test('a key in the query string is not a key', async (t) => {
    assertUnauthorized(t, await anon.get(`/api/v1/affiliates?api_key=${encodeURIComponent(key)}`));
  });
  t.test('unknown routes under /api/v1 ask for a key first (existence is not revealed)', async (t) => {
    assertUnauthorized(t, await anon.get('/api/v1/no-such-thing'));
    assertUnauthorized(t, await anon.get(`/api/v1/affiliates/${newId('aff')}`));
  });
  t.test('the same key is accepted with the proper header (the cases above fail for the right reason)', async (t) => {
    t.equal((await anon.get('/api/v1/affiliates', { headers: { authorization: `Bearer ${key}` } })).status, 200);
    t.equal(
      (await anon.get('/api/v1/affiliates', { headers: { authorization: `bearer  ${key}` } })).status,
      200,
      'scheme is case-insensitive',
    );
  });
});

t.test('a revoked key is refused on every replica within a second', async (t) => {
  const m = await platform.merchant();
  // Use the key on both replicas first, so that each has it cached as valid.
  for (const url of gatewayUrls)
    t.equal((await platform.client(m.key, url).get('/api/v1/affiliates')).status, 200, `valid on ${url}`);
  await revokeKey(platform.sql, m.keyId);
  await sleep(PROPAGATION_MS);
  for (const url of gatewayUrls) {
    assertUnauthorized(t, await platform.client(m.key, url).get('/api/v1/affiliates'));
    assertUnauthorized(t, await platform.client(m.key, url).post('/api/v1/affiliates', { email: email() }));
  }
  // Another key of the same merchant still works: revocation is per key.
  const other = await createKey(platform.sql, m.id, 'read');
  t.equal((await platform.client(other.key).get('/api/v1/affiliates')).status, 200);
});

t.test('scopes: read-only, write-only and wildcard keys', async (t) => {
  const m = await platform.merchant({ scopes: '*' });
  const readOnly = platform.client((await createKey(platform.sql, m.id, 'read')).key);
  const writeOnly = platform.client((await createKey(platform.sql, m.id, 'write')).key);
  const wildcard = m.client;

  const created = await wildcard.post('/api/v1/affiliates', { email: email() });
  t.equal(created.status, 201, "'*' key may create");
  const id = created.body.id as string;
  t.equal((await wildcard.get('/api/v1/affiliates')).status, 200, "'*' key may list");
  t.equal((await wildcard.get(`/api/v1/affiliates/${id}`)).status, 200, "'*' key may get");
  t.equal(
    (await wildcard.patch(`/api/v1/affiliates/${id}`, { display_name: 'Wild' })).status,
    200,
    "'*' key may update",
  );

  assertError(t, await readOnly.post('/api/v1/affiliates', { email: email() }), 403, 'FORBIDDEN');
  assertError(t, await readOnly.patch(`/api/v1/affiliates/${id}`, { display_name: 'Nope' }), 403, 'FORBIDDEN');
  t.equal((await readOnly.get('/api/v1/affiliates')).status, 200, 'read-only key may list');
  t.equal((await readOnly.get(`/api/v1/affiliates/${id}`)).status, 200, 'read-only key may get');

  assertError(t, await writeOnly.get('/api/v1/affiliates'), 403, 'FORBIDDEN');
  assertError(t, await writeOnly.get(`/api/v1/affiliates/${id}`), 403, 'FORBIDDEN');
  t.equal((await writeOnly.post('/api/v1/affiliates', { email: email() })).status, 201, 'write-only key may create');
  t.equal(
    (await writeOnly.patch(`/api/v1/affiliates/${id}`, { display_name: 'Written' })).status,
    200,
    'write-only key may update',
  );

  // Nothing was created or changed by the refused calls.
  const list = await wildcard.get('/api/v1/affiliates');
  t.equal(list.body.data.length, 2);
  t.equal((await wildcard.get(`/api/v1/affiliates/${id}`)).body.display_name, 'Written');
});

t.test('every operation is scoped: a key with only the other scope gets 403 on each', async (t) => {
  const m = await platform.merchant({ scopes: 'read' });
  const writeOnly = platform.client((await createKey(platform.sql, m.id, 'write')).key);
  for (const op of operations) {
    const client = op.scope === 'read' ? writeOnly : m.client;
    assertError(t, await call(client, op, sampleRequest(op, newId('aff'))), 403, 'FORBIDDEN');
  }
});

t.test(
  'a merchant below growth gets 402 PLAN_REQUIRED on every operation with its existing key, and back on growth it works again',
  async (t) => {
    const m = await platform.merchant({ scopes: '*' });
    const existing = await m.client.post('/api/v1/affiliates', { email: email() });
    t.equal(existing.status, 201);
    for (const url of gatewayUrls)
      t.equal((await platform.client(m.key, url).get('/api/v1/affiliates')).status, 200, `cached as growth on ${url}`);

    await setPlan(platform.sql, m.id, 'starter');
    await sleep(PROPAGATION_MS);
    t.ok(operations.length >= 4, 'the catalogue has operations');
    for (const url of gatewayUrls) {
      const client = platform.client(m.key, url);
      for (const op of operations) {
        const res = await call(client, op, sampleRequest(op, existing.body.id));
        assertError(t, res, 402, 'PLAN_REQUIRED');
        t.equal(res.headers.get('www-authenticate'), null, `${op.operationId}: no WWW-Authenticate on 402`);
      }
    }
    const unchanged =
      await platform.sql`select count(*)::int as n, min(display_name) as name from affiliates where merchant_id = ${m.id}`;
    t.same(unchanged, [{ n: 1, name: existing.body.display_name }], 'nothing was created or changed while on starter');

    await setPlan(platform.sql, m.id, 'free');
    await sleep(PROPAGATION_MS);
    assertError(t, await m.client.get('/api/v1/affiliates'), 402, 'PLAN_REQUIRED');

    await setPlan(platform.sql, m.id, 'growth');
    await sleep(PROPAGATION_MS);
    for (const url of gatewayUrls) {
      const client = platform.client(m.key, url);
      t.equal((await client.get('/api/v1/affiliates')).status, 200, `access restored on ${url}`);
      t.equal((await client.post('/api/v1/affiliates', { email: email() })).status, 201, `writes restored on ${url}`);
    }
  },
);

t.test('a 402 takes no slot of the rate window (plan is checked before rate) and still shows the window', async (t) => {
  const m = await platform.merchant();
  t.same(
    [
      rateHeaders(t, await m.client.get('/api/v1/affiliates')).remaining,
      rateHeaders(t, await m.client.get('/api/v1/affiliates')).remaining,
    ],
    [599, 598],
  );
  await setPlan(platform.sql, m.id, 'starter');
  await sleep(PROPAGATION_MS);
  for (let i = 0; i < 5; i++) {
    const res = await m.client.get('/api/v1/affiliates');
    assertError(t, res, 402, 'PLAN_REQUIRED');
    const h = rateHeaders(t, res);
    t.same([h.limit, h.remaining], [600, 598], `402 #${i + 1}: the window is shown, not used`);
    t.ok(h.reset >= 1 && h.reset <= 60);
  }
  await setPlan(platform.sql, m.id, 'growth');
  await sleep(PROPAGATION_MS);
  t.equal(rateHeaders(t, await m.client.get('/api/v1/affiliates')).remaining, 597, 'the next slot after the 402s');

  // A key that has not been used in this window: the whole window is shown.
  const fresh = await platform.merchant({ plan: 'starter' });
  const h = rateHeaders(t, await fresh.client.get('/api/v1/affiliates'));
  t.same([h.limit, h.remaining, h.reset], [600, 600, 60]);
});

t.test('check order: key (401) → plan (402) → scope (403) → input (400) → row (404)', async (t) => {
  const invalidBody = { email: 'not an e-mail', unknown_field: true };

  t.test('an invalid key on a starter-plan route with a bad body is 401', async (t) => {
    assertUnauthorized(t, await platform.client('svc_short').post('/api/v1/affiliates', invalidBody));
  });

  t.test('a revoked key of a starter merchant is 401, not 402', async (t) => {
    const m = await platform.merchant({ plan: 'starter' });
    await revokeKey(platform.sql, m.keyId);
    assertUnauthorized(t, await m.client.get('/api/v1/affiliates'));
  });

  t.test('a starter merchant with a read-only key POSTing an invalid body is 402 (not 403, not 400)', async (t) => {
    const m = await platform.merchant({ plan: 'starter', scopes: 'read' });
    assertError(t, await m.client.post('/api/v1/affiliates', invalidBody), 402, 'PLAN_REQUIRED');
    assertError(t, await m.client.patch(`/api/v1/affiliates/${newId('aff')}`, invalidBody), 402, 'PLAN_REQUIRED');
    assertError(t, await m.client.get('/api/v1/affiliates?limit=0&bogus=1'), 402, 'PLAN_REQUIRED');
  });

  t.test('a read-only key POSTing an invalid body is 403 (not 400)', async (t) => {
    const m = await platform.merchant({ scopes: 'read' });
    assertError(t, await m.client.post('/api/v1/affiliates', invalidBody), 403, 'FORBIDDEN');
    assertError(t, await m.client.patch(`/api/v1/affiliates/${newId('aff')}`, invalidBody), 403, 'FORBIDDEN');
    const raw = await m.client.post('/api/v1/affiliates', undefined, {
      raw: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    assertError(t, raw, 403, 'FORBIDDEN');
  });

  t.test(
    'a write key PATCHing an unknown affiliate with an invalid body is 400 (not 404); with a valid body 404',
    async (t) => {
      const m = await platform.merchant({ scopes: 'write' });
      const missing = newId('aff');
      assertError(
        t,
        await m.client.patch(`/api/v1/affiliates/${missing}`, { status: 'retired' }),
        400,
        'INVALID_INPUT',
        { detailPaths: ['status'] },
      );
      assertError(t, await m.client.patch(`/api/v1/affiliates/${missing}`, { status: 'approved' }), 404, 'NOT_FOUND');
    },
  );
});
