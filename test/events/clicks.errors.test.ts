import t from 'tap';
import { loadGatewayConfig } from '@platform/gateway/config';
import type { Detail } from '../helpers/errors.ts';
import { expectError, expectInvalid as invalid } from '../helpers/errors.ts';
import { clickReferralLink, createAffiliate, setSettings, startWithEvents } from './setup.ts';

/**
 * GET /api/v1/clicks and GET /api/v1/events refuse bad parameters with the 400 envelope naming each one (never a
 * clamp, never a 5xx), and answer 404 for an id that names nothing of the merchant's.
 */
const { platform } = await startWithEvents(t);
const { sql, baseUrl } = platform;
const merchant = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
const { client } = merchant;
await setSettings(sql, merchant.id, { landing_url: 'https://shop.example.com/' });
await createAffiliate(client, 'ann@example.com', { slug: 'ann' });
await clickReferralLink(baseUrl, merchant.id, 'ann');
await clickReferralLink(baseUrl, merchant.id, 'ann', { cookie: '' });
for (const external_id of ['o-1', 'o-2'])
  await client.post('/api/v1/events', { event_type: 'purchase', external_id, coupon: 'NONE' });

const pathsOf = (res: { status: number; body: { error?: { details?: Detail[] } } }) =>
  res.status === 400 ? (res.body.error?.details ?? []).map((d) => d.path) : [`status ${res.status}`];

for (const list of ['clicks', 'events'] as const) {
  t.test(`GET /${list}: every parameter is checked, by name`, async (t) => {
    const cases: [string, string[]][] = [
      ['limit=0', ['limit']],
      ['limit=101', ['limit']],
      ['limit=ten', ['limit']],
      ['affiliate_id=ann', ['affiliate_id']],
      ['created_after=yesterday', ['created_after']],
      ['created_before=2026-13-01T00:00:00Z', ['created_before']],
      ['created_after=2026-11-01', ['created_after']],
      ['cursor=', ['cursor']],
      ['ip=1.2.3.4', ['ip']],
      ['limit=0&created_after=x', ['limit', 'created_after']],
    ];
    if (list === 'events') cases.push(['event_type=Purchase', ['event_type']], ['external_id=', ['external_id']]);
    else cases.push(['event_type=purchase', ['event_type']]);
    for (const [query, paths] of cases) {
      const res = await client.get(`/api/v1/${list}?${query}`);
      t.equal(res.body?.error?.code, 'INVALID_INPUT', query);
      t.same(pathsOf(res).sort(), [...paths].sort(), `${query}: names ${paths.join(', ')}`);
    }
    invalid(t, await client.get(`/api/v1/${list}?cursor=forged.cursor`), [
      { path: 'cursor', message: 'is not a cursor issued for this list' },
    ]);

    // A cursor is bound to its list, its merchant and its filters.
    const page = await client.get(`/api/v1/${list}?limit=1`);
    t.type(page.body.next_cursor, 'string');
    const cursor = encodeURIComponent(page.body.next_cursor);
    t.equal((await client.get(`/api/v1/${list}?limit=1&cursor=${cursor}`)).status, 200, 'the cursor as issued');
    const other = await platform.merchant();
    const elsewhere = [
      `/api/v1/${list}?limit=1&created_after=2020-01-01T00:00:00Z&cursor=${cursor}`,
      `/api/v1/${list === 'clicks' ? 'events' : 'clicks'}?limit=1&cursor=${cursor}`,
      `/api/v1/coupons?limit=1&cursor=${cursor}`,
    ];
    for (const path of elsewhere)
      invalid(t, await client.get(path), [{ path: 'cursor', message: 'is not a cursor issued for this list' }]);
    invalid(t, await other.client.get(`/api/v1/${list}?limit=1&cursor=${cursor}`), [
      { path: 'cursor', message: 'is not a cursor issued for this list' },
    ]);
  });
}

t.test('GET /clicks/{id} and /events/{id}: unknown and malformed ids are 404', async (t) => {
  for (const id of [
    'vis_00000000000000000000000000',
    'vis_zzzzzzzzzzzzzzzzzzzzzzzzzz',
    'nope',
    'evt_01jd3t6m0s2e4w5x6y7z8a9b0c',
  ])
    expectError(t, await client.get(`/api/v1/clicks/${id}`), 404, 'NOT_FOUND', 'No such click');
  for (const id of [
    'evt_00000000000000000000000000',
    'evt_01jd3t6m0s2e4w5x6y7z8a9b0c',
    'nope',
    'vis_01jd3t6m0s2e4w5x6y7z8a9b0c',
  ])
    expectError(t, await client.get(`/api/v1/events/${id}`), 404, 'NOT_FOUND', 'No such event');
});

t.test('GEO_COUNTRY_HEADER must be a header name; unset by default', async (t) => {
  t.equal(loadGatewayConfig({ ...platform.env }).GEO_COUNTRY_HEADER, undefined);
  t.equal(loadGatewayConfig({ ...platform.env, GEO_COUNTRY_HEADER: '' }).GEO_COUNTRY_HEADER, undefined, 'empty: unset');
  t.equal(
    loadGatewayConfig({ ...platform.env, GEO_COUNTRY_HEADER: 'CF-IPCountry' }).GEO_COUNTRY_HEADER,
    'CF-IPCountry',
  );
  for (const value of ['CF IPCountry', 'x-country:', 'a'.repeat(65)])
    t.throws(
      () => loadGatewayConfig({ ...platform.env, GEO_COUNTRY_HEADER: value }),
      /GEO_COUNTRY_HEADER/,
      JSON.stringify(value),
    );
});

t.test('an id whose time is past year 9999 names nothing, also as an event cookie_id', async (t) => {
  const far = 'vis_zzzzzzzzzzzzzzzzzzzzzzzzzz';
  const res = await client.post('/api/v1/events', { event_type: 'purchase', external_id: 'far', cookie_id: far });
  t.equal(res.status, 201, 'recorded, not a 500');
  t.same(
    { affiliate_id: res.body.affiliate_id, attributed_by: res.body.attributed_by },
    { affiliate_id: null, attributed_by: null },
  );
  expectError(t, await client.get('/api/v1/events/evt_zzzzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'NOT_FOUND', 'No such event');
});
