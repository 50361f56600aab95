import t from 'tap';
import { DOMAIN_EVENT_TYPES } from '@platform/shared/catalogue';
import { eventually } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook as verify, type ReceivedWebhook } from '../helpers/receiver.ts';
import { startWebhookPlatform } from '../helpers/webhooks.ts';

const { platform } = await startWebhookPlatform(t);
const { client, id: merchantId } = await platform.merchant();

const waitFor = (receiver: { received: ReceivedWebhook[] }, count: number, what: string) =>
  eventually(async () => (receiver.received.length >= count ? receiver.received : undefined), 10_000, what);

t.test('register an endpoint, receive a signed event, verify it with standardwebhooks', async (t) => {
  const receiver = await startReceiver(t);
  const created = await client.post('/api/v1/webhook_endpoints', { url: receiver.url, description: 'CRM' });
  t.equal(created.status, 201);
  t.match(created.body, {
    id: /^we_[0-9a-z]{26}$/,
    url: receiver.url,
    description: 'CRM',
    enabled: true,
    disabled_reason: null,
    failure_threshold: 15,
    consecutive_failures: 0,
    last_success_at: null,
    secret: /^whsec_[A-Za-z0-9+/]{43}=$/,
  });
  t.same(created.body.event_types, [...DOMAIN_EVENT_TYPES], 'all twelve types by default');
  t.equal(Buffer.from(created.body.secret.slice(6), 'base64').length, 32);

  const affiliate = await client.post('/api/v1/affiliates', { email: 'hooked@example.com' });
  t.equal(affiliate.status, 201);
  const [hook] = await waitFor(receiver, 1, 'the affiliate.created webhook');
  t.equal(hook!.headers['content-type'], 'application/json');
  t.match(String(hook!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/, 'one signature');
  t.ok(Math.abs(Number(hook!.headers['webhook-timestamp']) - Date.now() / 1000) < 60, 'timestamp is now, in seconds');
  const envelope = verify(created.body.secret, hook!) as Record<string, unknown>;
  t.same(Object.keys(envelope), ['id', 'type', 'created_at', 'merchant_id', 'data']);
  t.equal(envelope['id'], hook!.headers['webhook-id']);
  t.match(envelope, { id: /^msg_/, type: 'affiliate.created', merchant_id: merchantId, data: affiliate.body });
  t.same(envelope['data'], affiliate.body, 'data is the public affiliate object');

  // One changed byte of the body fails verification.
  const tampered = hook!.body.replace('hooked@example.com', 'hooked@example.con');
  t.not(tampered, hook!.body);
  t.throws(() => verify(created.body.secret, hook!, tampered), /signature/i);
  // So does another secret.
  t.throws(() => verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, hook!), /signature/i);

  // The receiver has answered; the dispatcher records the success just after.
  const after = await eventually(
    async () => {
      const res = await client.get(`/api/v1/webhook_endpoints/${created.body.id}`);
      return res.body.last_success_at ? res : undefined;
    },
    10_000,
    'last_success_at',
  );
  t.equal(after.status, 200);
  t.equal(after.body.consecutive_failures, 0);
  t.type(after.body.last_success_at, 'string', 'last_success_at set by the success');
  t.notOk('secret' in after.body, 'the secret is shown on create and rotate only');
});

t.test('only subscribed event types are sent; a disabled endpoint gets nothing', async (t) => {
  const approvals = await startReceiver(t);
  const disabled = await startReceiver(t);
  const sub = await client.post('/api/v1/webhook_endpoints', {
    url: approvals.url,
    event_types: ['affiliate.approved'],
  });
  t.equal(sub.status, 201);
  const off = await client.post('/api/v1/webhook_endpoints', { url: disabled.url, enabled: false });
  t.equal(off.status, 201);
  t.match(off.body, { enabled: false, disabled_reason: 'manual' });

  const pending = await client.post('/api/v1/affiliates', { email: 'pending@example.com', status: 'pending' });
  const approved = await client.patch(`/api/v1/affiliates/${pending.body.id}`, { status: 'approved' });
  t.equal(approved.status, 200);
  const [hook] = await waitFor(approvals, 1, 'affiliate.approved');
  t.equal(hook!.type, 'affiliate.approved');
  const envelope = verify(sub.body.secret, hook!) as { data: { id: string; status: string } };
  t.match(envelope.data, { id: pending.body.id, status: 'approved' });

  // The affiliate.created of the same affiliate was fanned out before the approval: had it been sent, it would have
  // arrived first. The log of the subscribed endpoint shows the approval alone.
  const log = await client.get(`/api/v1/webhook_endpoints/${sub.body.id}/deliveries`);
  t.equal(log.status, 200);
  t.same(
    log.body.data.map((d: { event_type: string }) => d.event_type),
    ['affiliate.approved'],
  );
  t.equal(approvals.received.length, 1);
  const offLog = await client.get(`/api/v1/webhook_endpoints/${off.body.id}/deliveries`);
  t.same(offLog.body.data, [], 'no deliveries for a disabled endpoint');
  t.equal(disabled.received.length, 0);
});

t.test('rotating the secret: both signatures during the grace period, either secret verifies', async (t) => {
  const receiver = await startReceiver(t);
  const created = await client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['commission.approved'],
  });
  const rotated = await client.post(`/api/v1/webhook_endpoints/${created.body.id}/rotate_secret`);
  t.equal(rotated.status, 200);
  t.match(rotated.body, { id: created.body.id, secret: /^whsec_/ });
  t.not(rotated.body.secret, created.body.secret);

  const test = await client.post(`/api/v1/webhook_endpoints/${created.body.id}/test`, {
    event_type: 'commission.approved',
  });
  t.equal(test.status, 201);
  t.match(test.body, {
    id: /^dlv_/,
    message_id: /^msg_/,
    endpoint_id: created.body.id,
    event_type: 'commission.approved',
    status: 'pending',
  });
  const [hook] = await waitFor(receiver, 1, 'the test event');
  const signatures = String(hook!.headers['webhook-signature']).split(' ');
  t.equal(signatures.length, 2, 'two space-separated signatures');
  for (const s of signatures) t.match(s, /^v1,[A-Za-z0-9+/]{43}=$/);
  const byNew = verify(rotated.body.secret, hook!) as { id: string; type: string; data: Record<string, unknown> };
  const byOld = verify(created.body.secret, hook!);
  t.same(byNew, byOld);
  t.equal(byNew.id, test.body.message_id);
  t.equal(byNew.type, 'commission.approved');
  t.match(byNew.data, { commission_id: String, affiliate_id: String, amount: Number, currency: 'USD' });

  // After the grace period only the new secret signs.
  await platform.sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${created.body.id}`;
  await client.post(`/api/v1/webhook_endpoints/${created.body.id}/test`, { event_type: 'commission.approved' });
  const [, second] = await waitFor(receiver, 2, 'the second test event');
  t.equal(String(second!.headers['webhook-signature']).split(' ').length, 1);
  t.ok(verify(rotated.body.secret, second!));
  t.throws(() => verify(created.body.secret, second!), /signature/i);
});

t.test('list, update and delete endpoints', async (t) => {
  const fresh = await platform.merchant();
  const c = fresh.client;
  const a = await c.post('/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/a' });
  const b = await c.post('/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/b', failure_threshold: 3 });
  const page1 = await c.get('/api/v1/webhook_endpoints?limit=1');
  t.equal(page1.status, 200);
  t.same(
    page1.body.data.map((e: { id: string }) => e.id),
    [b.body.id],
  );
  t.notOk('secret' in page1.body.data[0]);
  const page2 = await c.get(`/api/v1/webhook_endpoints?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
  t.same(
    page2.body.data.map((e: { id: string }) => e.id),
    [a.body.id],
  );
  t.equal(page2.body.next_cursor, null);

  const patched = await c.patch(`/api/v1/webhook_endpoints/${a.body.id}`, {
    url: 'http://127.0.0.1:9/changed',
    description: 'renamed',
    event_types: ['payout.paid', 'payout.failed'],
    failure_threshold: 5,
  });
  t.equal(patched.status, 200);
  t.match(patched.body, { url: 'http://127.0.0.1:9/changed', description: 'renamed', failure_threshold: 5 });
  t.same(patched.body.event_types, ['payout.paid', 'payout.failed']);

  const deleted = await c.delete(`/api/v1/webhook_endpoints/${a.body.id}`);
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  t.equal((await c.get(`/api/v1/webhook_endpoints/${a.body.id}`)).status, 404);
  t.equal((await c.delete(`/api/v1/webhook_endpoints/${a.body.id}`)).status, 404);
  const list = await c.get('/api/v1/webhook_endpoints');
  t.same(
    list.body.data.map((e: { id: string }) => e.id),
    [b.body.id],
  );
});

t.test('the OpenAPI document lists the endpoint operations and the twelve webhooks', async (t) => {
  const doc = await platform.client().get('/api/v1/openapi');
  t.equal(doc.status, 200);
  const paths = doc.body.paths as Record<string, Record<string, { operationId: string }>>;
  t.equal(paths['/api/v1/webhook_endpoints']!['post']!.operationId, 'createWebhookEndpoint');
  t.equal(paths['/api/v1/webhook_endpoints']!['get']!.operationId, 'listWebhookEndpoints');
  t.same(Object.keys(paths['/api/v1/webhook_endpoints/{endpoint_id}']!).sort(), ['delete', 'get', 'patch']);
  t.ok(paths['/api/v1/webhook_endpoints/{endpoint_id}/rotate_secret']!['post']);
  t.ok(paths['/api/v1/webhook_endpoints/{endpoint_id}/test']!['post']);
  t.ok(paths['/api/v1/webhook_endpoints/{endpoint_id}/deliveries']!['get']);
  t.ok(paths['/api/v1/webhook_endpoints/{endpoint_id}/replay']!['post']);
  t.ok(paths['/api/v1/webhook_deliveries/{delivery_id}/replay']!['post']);
  t.same(Object.keys(doc.body.webhooks).sort(), [...DOMAIN_EVENT_TYPES].sort());
});
