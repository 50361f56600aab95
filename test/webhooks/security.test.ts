import t from 'tap';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { startWebhookPlatform, type LoggedDelivery } from '../helpers/webhooks.ts';

const { platform, dispatcherLogs } = await startWebhookPlatform(t);
const alice = await platform.merchant({ name: 'Alice' });
const bob = await platform.merchant({ name: 'Bob' });

t.test("another merchant's endpoints and deliveries are NOT_FOUND, and never listed", async (t) => {
  const receiver = await startReceiver(t, (_r, _n, res) => {
    res.statusCode = 400;
    res.end();
  });
  const created = await alice.client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['payout.paid'],
  });
  const id = created.body.id as string;
  const test = await alice.client.post(`/api/v1/webhook_endpoints/${id}/test`, { event_type: 'payout.paid' });
  const deliveryId = test.body.id as string;
  await eventually(
    async () => {
      const [d] = (await alice.client.get(`/api/v1/webhook_endpoints/${id}/deliveries`)).body.data as LoggedDelivery[];
      return d?.status === 'dead_lettered' ? d : undefined;
    },
    10_000,
    'the delivery to be dead-lettered',
  );

  const b = bob.client;
  const answers = [
    await b.get(`/api/v1/webhook_endpoints/${id}`),
    await b.patch(`/api/v1/webhook_endpoints/${id}`, { enabled: false }),
    await b.post(`/api/v1/webhook_endpoints/${id}/rotate_secret`),
    await b.post(`/api/v1/webhook_endpoints/${id}/test`, { event_type: 'payout.paid' }),
    await b.get(`/api/v1/webhook_endpoints/${id}/deliveries`),
    await b.post(`/api/v1/webhook_endpoints/${id}/replay`, {
      since: '2000-01-01T00:00:00Z',
      until: '2100-01-01T00:00:00Z',
    }),
    await b.post(`/api/v1/webhook_deliveries/${deliveryId}/replay`),
    await b.delete(`/api/v1/webhook_endpoints/${id}`),
  ];
  for (const res of answers) {
    t.equal(res.status, 404);
    t.equal(res.body.error.code, 'NOT_FOUND');
  }
  t.same((await b.get('/api/v1/webhook_endpoints')).body.data, []);
  // Nothing of Alice's changed.
  const still = await alice.client.get(`/api/v1/webhook_endpoints/${id}`);
  t.match(still.body, { enabled: true, disabled_reason: null });
  const [d] = (await alice.client.get(`/api/v1/webhook_endpoints/${id}/deliveries`)).body.data as LoggedDelivery[];
  t.equal(d!.status, 'dead_lettered', 'not replayed by Bob');
  t.equal(receiver.received.length, 1);
});

t.test('an event is delivered only to its own merchant’s endpoints', async (t) => {
  const aliceHooks = await startReceiver(t);
  const bobHooks = await startReceiver(t);
  await alice.client.post('/api/v1/webhook_endpoints', { url: aliceHooks.url, event_types: ['affiliate.created'] });
  await bob.client.post('/api/v1/webhook_endpoints', { url: bobHooks.url, event_types: ['affiliate.created'] });
  const created = await alice.client.post('/api/v1/affiliates', { email: 'only-alice@example.com' });
  t.equal(created.status, 201);
  await eventually(async () => (aliceHooks.received.length === 1 ? true : undefined), 10_000, "Alice's webhook");
  const bobCreated = await bob.client.post('/api/v1/affiliates', { email: 'only-bob@example.com' });
  await eventually(async () => (bobHooks.received.length === 1 ? true : undefined), 10_000, "Bob's webhook");
  t.equal(JSON.parse(aliceHooks.received[0]!.body).data.id, created.body.id);
  t.equal(JSON.parse(bobHooks.received[0]!.body).data.id, bobCreated.body.id);
  t.equal(aliceHooks.received.length, 1);
});

t.test('the secret is encrypted at rest and never appears in logs or other responses', async (t) => {
  const receiver = await startReceiver(t);
  const created = await alice.client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['payout.paid'],
  });
  const rotated = await alice.client.post(`/api/v1/webhook_endpoints/${created.body.id}/rotate_secret`);
  const secrets = [created.body.secret as string, rotated.body.secret as string];
  await alice.client.post(`/api/v1/webhook_endpoints/${created.body.id}/test`, { event_type: 'payout.paid' });
  await eventually(async () => (receiver.received.length === 1 ? true : undefined), 10_000, 'the test event');

  const [row] = await platform.sql<{ secret_encrypted: string; previous_secret_encrypted: string }[]>`
    select secret_encrypted, previous_secret_encrypted from webhook_endpoints where id = ${created.body.id}`;
  t.match(row!.secret_encrypted, /^v2:/);
  t.match(row!.previous_secret_encrypted, /^v2:/);
  const responses = [
    await alice.client.get(`/api/v1/webhook_endpoints/${created.body.id}`),
    await alice.client.get('/api/v1/webhook_endpoints'),
    await alice.client.get(`/api/v1/webhook_endpoints/${created.body.id}/deliveries`),
    await alice.client.patch(`/api/v1/webhook_endpoints/${created.body.id}`, { description: 'x' }),
  ];
  const everything = [JSON.stringify(row), ...responses.map((r) => r.text), ...dispatcherLogs, ...platform.logs].join(
    '\n',
  );
  t.ok(dispatcherLogs.length > 0 && platform.logs.length > 0, 'there are logs to search');
  for (const secret of secrets) {
    t.notOk(everything.includes(secret), 'the whole secret appears nowhere');
    t.notOk(everything.includes(secret.slice(6, 30)), 'nor a part of it');
  }
  t.notOk(everything.includes('whsec_'), 'no secret-looking value at all');
});
