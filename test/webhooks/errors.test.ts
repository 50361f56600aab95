import t, { type Test } from 'tap';
import { startReceiver } from '../helpers/receiver.ts';
import { startWebhookPlatform } from '../helpers/webhooks.ts';

const { platform } = await startWebhookPlatform(t);
const { client } = await platform.merchant();
const receiver = await startReceiver(t);
const endpoint = (await client.post('/api/v1/webhook_endpoints', { url: receiver.url, event_types: ['payout.paid'] }))
  .body as { id: string };

/** Asserts an INVALID_INPUT answer naming exactly these paths. */
async function invalid(t: Test, res: Promise<{ status: number; body: any }>, paths: string[], message?: RegExp) {
  const r = await res;
  t.equal(r.status, 400);
  t.equal(r.body.error.code, 'INVALID_INPUT');
  t.same(r.body.error.details.map((d: { path: string }) => d.path).sort(), [...paths].sort());
  if (message) t.match(r.body.error.details[0].message, message);
}

t.test('create: bad bodies are INVALID_INPUT on the offending field', async (t) => {
  await invalid(t, client.post('/api/v1/webhook_endpoints', {}), ['url'], /is required/);
  await invalid(
    t,
    client.post('/api/v1/webhook_endpoints', { url: receiver.url, colour: 'red' }),
    ['colour'],
    /not a known field/,
  );
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: receiver.url, event_types: [] }), ['event_types']);
  await invalid(
    t,
    client.post('/api/v1/webhook_endpoints', { url: receiver.url, event_types: ['order.placed'] }),
    ['event_types[0]'],
    /must be one of/,
  );
  await invalid(
    t,
    client.post('/api/v1/webhook_endpoints', { url: receiver.url, event_types: ['payout.paid', 'payout.paid'] }),
    ['event_types'],
  );
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: receiver.url, failure_threshold: 0 }), [
    'failure_threshold',
  ]);
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: receiver.url, failure_threshold: 101 }), [
    'failure_threshold',
  ]);
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: receiver.url, failure_threshold: 1.5 }), [
    'failure_threshold',
  ]);
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: receiver.url, description: 'x'.repeat(501) }), [
    'description',
  ]);
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: 42 }), ['url']);
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: `http://127.0.0.1/${'a'.repeat(2050)}` }), ['url']);
  await invalid(t, client.post('/api/v1/webhook_endpoints', { url: receiver.url, enabled: 'yes' }), ['enabled']);
});

t.test('update, test, list and replay: bad input is INVALID_INPUT', async (t) => {
  const path = `/api/v1/webhook_endpoints/${endpoint.id}`;
  await invalid(t, client.patch(path, {}), ['body'], /at least one field/);
  await invalid(t, client.patch(path, { secret: 'whsec_x' }), ['secret']);
  await invalid(t, client.post(`${path}/test`, {}), ['event_type'], /is required/);
  await invalid(t, client.post(`${path}/test`, { event_type: 'nope' }), ['event_type'], /must be one of/);
  await invalid(t, client.get(`${path}/deliveries?limit=0`), ['limit']);
  await invalid(t, client.get(`${path}/deliveries?limit=101`), ['limit']);
  await invalid(t, client.get(`${path}/deliveries?status=lost`), ['status']);
  await invalid(t, client.get(`${path}/deliveries?page=2`), ['page']);
  await invalid(t, client.get('/api/v1/webhook_endpoints?limit=101'), ['limit']);
  await invalid(t, client.get('/api/v1/webhook_endpoints?cursor=forged.cursor'), ['cursor']);
  await invalid(t, client.post(`${path}/replay`, { since: '2026-11-22T10:00:00Z' }), ['until']);
  await invalid(t, client.post(`${path}/replay`, { since: 'yesterday', until: '2026-11-22T10:00:00Z' }), ['since']);
  await invalid(
    t,
    client.post(`${path}/replay`, { since: '2026-11-22T10:00:00Z', until: '2026-11-22T09:00:00Z' }),
    ['until'],
    /later than since/,
  );
  const empty = await client.post(`${path}/replay`, { since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' });
  t.equal(empty.status, 200);
  t.same(empty.body, { replayed: 0 });
});

t.test('unknown and malformed ids are NOT_FOUND', async (t) => {
  const missing = 'we_00000000000000000000000000';
  for (const id of [missing, 'we_nope', '1', 'dlv_00000000000000000000000000']) {
    const res = await client.get(`/api/v1/webhook_endpoints/${id}`);
    t.equal(res.status, 404, id);
    t.equal(res.body.error.code, 'NOT_FOUND');
  }
  t.equal((await client.patch(`/api/v1/webhook_endpoints/${missing}`, { description: 'x' })).status, 404);
  t.equal((await client.delete(`/api/v1/webhook_endpoints/${missing}`)).status, 404);
  t.equal((await client.post(`/api/v1/webhook_endpoints/${missing}/rotate_secret`)).status, 404);
  t.equal((await client.post(`/api/v1/webhook_endpoints/${missing}/test`, { event_type: 'payout.paid' })).status, 404);
  t.equal((await client.get(`/api/v1/webhook_endpoints/${missing}/deliveries`)).status, 404);
  t.equal((await client.post(`/api/v1/webhook_deliveries/dlv_00000000000000000000000000/replay`)).status, 404);
  t.equal((await client.post(`/api/v1/webhook_deliveries/nope/replay`)).status, 404);
});

t.test('scopes: read cannot change endpoints, write alone cannot read them', async (t) => {
  const reader = await platform.merchant({ scopes: 'read' });
  const writer = await platform.merchant({ scopes: 'write' });
  const denied = await reader.client.post('/api/v1/webhook_endpoints', { url: receiver.url });
  t.equal(denied.status, 403);
  t.equal(denied.body.error.code, 'FORBIDDEN');
  t.equal((await reader.client.get('/api/v1/webhook_endpoints')).status, 200);
  t.equal((await writer.client.post('/api/v1/webhook_endpoints', { url: receiver.url })).status, 201);
  t.equal((await writer.client.get('/api/v1/webhook_endpoints')).status, 403);
});
