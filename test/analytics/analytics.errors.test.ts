import t from 'tap';
import type { Detail } from '../helpers/errors.ts';
import { expectError } from '../helpers/errors.ts';
import { startWithEvents } from '../events/setup.ts';

/** GET /api/v1/analytics refuses each bad parameter with the 400 envelope naming it; never a clamp, never a 5xx. */
const { platform } = await startWithEvents(t);
const merchant = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
const { client } = merchant;

const pathsOf = (res: { status: number; body: { error?: { details?: Detail[] } } }) =>
  res.status === 400 ? (res.body.error?.details ?? []).map((d) => d.path) : [`status ${res.status}`];

t.test('every parameter is checked, by name', async (t) => {
  const cases: [string, string[]][] = [
    ['group_by=hour', ['group_by']],
    ['group_by=', ['group_by']],
    ['start=yesterday', ['start']],
    ['start=2026-11-01', ['start']],
    ['end=2026-13-01T00:00:00Z', ['end']],
    ['start=2026-11-02T00:00:00Z&end=2026-11-01T00:00:00Z', ['end']],
    ['start=2026-11-01T00:00:00Z&end=2026-11-01T00:00:00Z', ['end']],
    ['start=2024-01-01T00:00:00Z&end=2026-01-01T00:00:01Z', ['end']],
    ['start=2020-01-01T00:00:00Z', ['start']],
    ['timezone=Mars/Olympus_Mons', ['timezone']],
    // An offset: Intl takes it, Postgres reads it as a POSIX zone with east and west swapped.
    ['timezone=%2B05:30', ['timezone']],
    ['timezone=-03:00', ['timezone']],
    // Instants Node and Postgres cannot both read: a leap second, year 0, a day past year 9999 in UTC.
    ['end=2026-06-30T23:59:60Z', ['end']],
    ['start=0000-01-01T00:00:00Z&end=0000-02-01T00:00:00Z', ['end', 'start']],
    ['start=9999-12-01T00:00:00Z&end=9999-12-31T23:59:59-23:59', ['end']],
    ['timezone=', ['timezone']],
    ['affiliate_id=ann', ['affiliate_id']],
    ['currency=usd', ['currency']],
    ['currency=XYZ', ['currency']],
    ['limit=0', ['limit']],
    ['limit=101', ['limit']],
    ['limit=ten', ['limit']],
    ['granularity=day', ['granularity']],
    ['limit=0&group_by=year', ['group_by', 'limit']],
  ];
  for (const [query, paths] of cases) {
    const res = await client.get(`/api/v1/analytics?${query}`);
    t.same(pathsOf(res).sort(), paths, query);
    if (res.status === 400) t.equal(res.body.error.code, 'INVALID_INPUT', `${query}: INVALID_INPUT`);
  }
});

t.test('the widest range allowed, and limit at its bounds, are answered', async (t) => {
  const accepted = [
    'start=2024-01-01T00:00:00Z&end=2026-01-01T00:00:00Z&group_by=month',
    'group_by=country&limit=1',
    'group_by=affiliate&limit=100',
    'timezone=Asia/Kathmandu&currency=JPY',
  ];
  const statuses = await Promise.all(accepted.map((q) => client.get(`/api/v1/analytics?${q}`)));
  t.same(
    statuses.map((r) => r.status),
    accepted.map(() => 200),
  );
  const months = await client.get(
    '/api/v1/analytics?start=2024-01-01T00:00:00Z&end=2026-01-01T00:00:00Z&group_by=month',
  );
  t.equal(months.body.data.length, 24, 'every month of the two years');
});

t.test('a key without read scope, and a plan without API access, are refused', async (t) => {
  const writer = await platform.merchant({ scopes: 'write' });
  expectError(t, await writer.client.get('/api/v1/analytics'), 403, 'FORBIDDEN', 'This key lacks the read scope');
  const starter = await platform.merchant({ plan: 'starter' });
  const res = await starter.client.get('/api/v1/analytics');
  t.equal(res.status, 402, 'plan-gated like every /api/v1 route');
});

t.test('the list filters refuse the same instants, by name', async (t) => {
  for (const [path, param] of [
    ['/api/v1/clicks?created_after=0000-01-01T00:00:00Z', 'created_after'],
    ['/api/v1/clicks?created_before=2026-06-30T23:59:60Z', 'created_before'],
    ['/api/v1/events?created_after=0000-01-01T00:00:00Z', 'created_after'],
    ['/api/v1/events?created_before=9999-12-31T23:59:59-23:59', 'created_before'],
  ] as const) {
    const res = await client.get(path);
    t.same(pathsOf(res), [param], path);
  }
});
