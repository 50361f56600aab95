import t from 'tap';
import { newId } from '@platform/shared/ids';
import { createKey } from '../../scripts/admin/commands.ts';
import type { ApiClient, ApiResponse } from '../helpers/client.ts';
import { startPlatform } from '../helpers/platform.ts';
import { assertError, rateHeaders, type Asserts } from './expect.ts';

// Two replicas: the limit holds across all of them together, not per replica.
const platform = await startPlatform(t, { gateways: 2 });
const urls = platform.gateways.map((g) => `http://127.0.0.1:${g.port}`);
const BATCH = 50;

/** Sends `count` GETs with one key, alternating between the replicas, `BATCH` at a time. */
async function burst(key: string, count: number): Promise<ApiResponse[]> {
  const clients = urls.map((u) => platform.client(key, u));
  const out: ApiResponse[] = [];
  for (let start = 0; start < count; start += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - start) }, (_, i) =>
      clients[(start + i) % clients.length]!.get('/api/v1/affiliates'),
    );
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

function assertRateLimited(t: Asserts, res: ApiResponse, limit: number) {
  assertError(t, res, 429, 'RATE_LIMITED');
  const retryAfter = res.headers.get('retry-after') ?? '';
  t.match(retryAfter, /^\d+$/, `Retry-After is whole seconds (got ${retryAfter})`);
  t.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, 'Retry-After is between 1 and 60 seconds');
  const h = rateHeaders(t, res);
  t.equal(h.limit, limit, `RateLimit-Limit: ${limit}`);
  t.equal(h.remaining, 0, 'RateLimit-Remaining: 0');
  t.ok(h.reset >= 1 && h.reset <= 60, 'RateLimit-Reset is between 1 and 60 seconds');
}
t.test('the default 600 per minute holds across two gateways together', async (t) => {
  const { key } = await platform.merchant();
  const first = await burst(key, 600);
  t.equal(first.length, 600);
  const statuses = new Set(first.map((r) => r.status));
  t.same([...statuses], [200], 'requests 1..600 all succeed (none is 429)');
  const remaining = first.map((r) => rateHeaders(t, r));
  t.ok(
    remaining.every((h) => h.limit === 600),
    'RateLimit-Limit: 600 on every response',
  );
  // One shared counter: each request took a distinct slot, so Remaining ran from 599 down to 0 exactly once each.
  // Per-replica counters would repeat values (and allow 1200).
  t.same(
    remaining.map((h) => h.remaining).sort((a, b) => a - b),
    Array.from({ length: 600 }, (_, i) => i),
    'RateLimit-Remaining took every value from 599 down to 0 once',
  );
  for (const url of urls) assertRateLimited(t, await platform.client(key, url).get('/api/v1/affiliates'), 600);
});

t.test('a scale-plan key with rate_limit_per_min 60 is limited at its 61st request; other keys are not', async (t) => {
  const m = await platform.merchant({ plan: 'scale', rateLimit: 60 });
  const row = await platform.sql<
    { rate_limit_per_min: number }[]
  >`select rate_limit_per_min from api_keys where id = ${m.keyId}`;
  t.equal(row[0]!.rate_limit_per_min, 60);
  const first = await burst(m.key, 60);
  t.same([...new Set(first.map((r) => r.status))], [200], 'requests 1..60 succeed');
  t.ok(
    first.every((r) => rateHeaders(t, r).limit === 60),
    'RateLimit-Limit: 60',
  );
  assertRateLimited(t, await m.client.get('/api/v1/affiliates'), 60);
  // Over the limit, the request does nothing: a write is refused before it reaches the service.
  assertRateLimited(t, await m.client.post('/api/v1/affiliates', { email: 'late@example.com' }), 60);
  const rows = await platform.sql`select 1 from affiliates where merchant_id = ${m.id}`;
  t.equal(rows.length, 0, 'the refused write created nothing');

  // The limit is per key: another key of the same merchant has its own window.
  const other = await createKey(platform.sql, m.id, 'read,write');
  const res = await platform.client(other.key).get('/api/v1/affiliates');
  t.equal(res.status, 200);
  t.same(rateHeaders(t, res).remaining, 599, 'a fresh window for the other key');
});

t.test('check order: rate (429) comes before scope (403) and input (400)', async (t) => {
  const m = await platform.merchant({ plan: 'scale', rateLimit: 60, scopes: 'read' });
  await burst(m.key, 60);
  assertRateLimited(t, await m.client.post('/api/v1/affiliates', { not: 'valid' }), 60);
  assertRateLimited(t, await m.client.get('/api/v1/affiliates?limit=0'), 60);
});

t.test('every API response after authentication carries RateLimit-Limit, -Remaining and -Reset', async (t) => {
  const m = await platform.merchant({ scopes: 'read,write' });
  const readOnly = platform.client((await createKey(platform.sql, m.id, 'read')).key);
  const check = async (
    label: string,
    status: number,
    call: (c: ApiClient) => Promise<ApiResponse>,
    client: ApiClient = m.client,
  ) => {
    const res = await call(client);
    t.equal(res.status, status, `${label}: ${status}`);
    const h = rateHeaders(t, res);
    t.equal(h.limit, 600, `${label}: RateLimit-Limit`);
    t.ok(h.remaining < 600, `${label}: RateLimit-Remaining counts this request`);
    t.ok(h.reset >= 1 && h.reset <= 60, `${label}: RateLimit-Reset within the minute`);
  };
  let created = '';
  await check('201 create', 201, async (c) => {
    const r = await c.post('/api/v1/affiliates', { email: 'headers@example.com' });
    created = r.body.id;
    return r;
  });
  await check('200 list', 200, (c) => c.get('/api/v1/affiliates'));
  await check('200 get', 200, (c) => c.get(`/api/v1/affiliates/${created}`));
  await check('200 update', 200, (c) => c.patch(`/api/v1/affiliates/${created}`, { display_name: 'H' }));
  await check('400 bad body', 400, (c) => c.post('/api/v1/affiliates', { email: 'nope' }));
  await check('400 bad query', 400, (c) => c.get('/api/v1/affiliates?limit=500'));
  await check('403 scope', 403, (c) => c.post('/api/v1/affiliates', { email: 'ro@example.com' }), readOnly);
  await check('404 row', 404, (c) => c.get(`/api/v1/affiliates/${newId('aff')}`));
  await check('404 route', 404, (c) => c.get('/api/v1/nothing-here'));
  await check('409 conflict', 409, (c) => c.post('/api/v1/affiliates', { email: 'headers@example.com' }));
  await check('415 not JSON', 415, (c) =>
    c.post('/api/v1/affiliates', undefined, { raw: 'email=x', headers: { 'content-type': 'text/plain' } }),
  );

  // Remaining counts down across consecutive requests of one key.
  const a = rateHeaders(t, await m.client.get('/api/v1/affiliates'));
  const b = rateHeaders(t, await m.client.get('/api/v1/affiliates'));
  t.equal(b.remaining, a.remaining - 1, 'Remaining decreases by one per request');
});
