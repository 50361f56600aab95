import t from 'tap';
import { eventually, sleep } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook as verify } from '../helpers/receiver.ts';
import { deleteExpired } from '@platform/dispatcher/queries/sweep';
import { registerEndpoint, startWebhookPlatform, type LoggedDelivery } from '../helpers/webhooks.ts';

const { platform } = await startWebhookPlatform(t);
const { client } = await platform.merchant();

const log = async (endpointId: string, query = '') =>
  (await client.get(`/api/v1/webhook_endpoints/${endpointId}/deliveries${query}`)).body.data as LoggedDelivery[];
t.test('replay one and bulk replay between two timestamps: same webhook-id and body, fresh signature', async (t) => {
  let accept = false;
  const receiver = await startReceiver(t, (_r, _n, res) => {
    res.statusCode = accept ? 200 : 422;
    res.end();
  });
  const endpoint = (
    await client.post('/api/v1/webhook_endpoints', { url: receiver.url, event_types: ['payout.failed'] })
  ).body;
  const send = async () =>
    (await client.post(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { event_type: 'payout.failed' }))
      .body as LoggedDelivery;
  const first = await send();
  const second = await send();
  await sleep(50);
  const boundary = new Date().toISOString();
  await sleep(50);
  const third = await send();
  await eventually(
    async () => {
      const ds = await log(endpoint.id);
      return ds.length === 3 && ds.every((d) => d.status === 'dead_lettered') ? ds : undefined;
    },
    10_000,
    'three dead-lettered deliveries',
  );
  t.equal(receiver.received.length, 3);
  const original = new Map(receiver.received.map((r) => [r.id, r]));
  await sleep(1100); // the replay's timestamp, hence its signature, will differ

  accept = true;
  const bulk = await client.post(`/api/v1/webhook_endpoints/${endpoint.id}/replay`, {
    since: first.created_at,
    until: boundary,
  });
  t.equal(bulk.status, 200);
  t.same(bulk.body, { replayed: 2 });
  await eventually(async () => (receiver.received.length === 5 ? true : undefined), 10_000, 'two replayed deliveries');
  const replayed = receiver.received.slice(3);
  t.same(replayed.map((r) => r.id).sort(), [first.message_id, second.message_id].sort(), 'the same webhook-ids');
  for (const r of replayed) {
    const before = original.get(r.id)!;
    t.equal(r.body, before.body, 'byte-identical body');
    t.ok(Number(r.headers['webhook-timestamp']) > Number(before.headers['webhook-timestamp']), 'a fresh timestamp');
    t.not(r.headers['webhook-signature'], before.headers['webhook-signature'], 'a fresh signature');
    t.ok(verify(endpoint.secret, r), 'which verifies');
  }
  const afterBulk = await log(endpoint.id);
  t.equal(afterBulk.find((d) => d.id === third.id)!.status, 'dead_lettered', 'outside the range: untouched');

  const one = await client.post(`/api/v1/webhook_deliveries/${third.id}/replay`);
  t.equal(one.status, 200);
  t.same(one.body, { replayed: 1 });
  await eventually(async () => (receiver.received.length === 6 ? true : undefined), 10_000, 'the single replay');
  t.equal(receiver.received[5]!.id, third.message_id);
  t.ok(verify(endpoint.secret, receiver.received[5]!));

  const done = await eventually(
    async () => {
      const ds = await log(endpoint.id);
      return ds.every((d) => d.status === 'succeeded') ? ds : undefined;
    },
    10_000,
    'all succeeded',
  );
  for (const d of done) {
    t.same(
      d.attempts.map((a) => a.status_code),
      [422, 200],
      'the log keeps both series of attempts',
    );
    t.equal(d.attempt_count, 1);
  }
  // A bulk replay takes only dead-lettered deliveries: nothing is left to replay.
  const again = await client.post(`/api/v1/webhook_endpoints/${endpoint.id}/replay`, {
    since: first.created_at,
    until: new Date().toISOString(),
  });
  t.same(again.body, { replayed: 0 });
  // A single delivery that succeeded can be sent again on request.
  const resend = await client.post(`/api/v1/webhook_deliveries/${third.id}/replay`);
  t.same(resend.body, { replayed: 1 });
  await eventually(async () => (receiver.received.length === 7 ? true : undefined), 10_000, 'the resend');
  t.equal(receiver.received[6]!.id, third.message_id);
});

t.test('the delivery log shows the last 100, newest first, each with its attempts', async (t) => {
  const receiver = await startReceiver(t);
  const endpoint = (
    await client.post('/api/v1/webhook_endpoints', { url: receiver.url, event_types: ['tax_form.submitted'] })
  ).body;
  const sent: string[] = [];
  for (let i = 0; i < 105; i++) {
    const res = await client.post(`/api/v1/webhook_endpoints/${endpoint.id}/test`, {
      event_type: 'tax_form.submitted',
    });
    sent.push(res.body.id);
  }
  const all = await eventually(
    async () => {
      const ds = await log(endpoint.id);
      return ds.length === 100 && ds.every((d) => d.status === 'succeeded') && receiver.received.length === 105
        ? ds
        : undefined;
    },
    20_000,
    'all 105 delivered',
  );
  t.same(
    all.map((d) => d.id),
    sent.slice(5).reverse(),
    'the newest 100, newest first',
  );
  for (const d of all) {
    t.equal(d.attempts.length, 1);
    t.equal(d.attempts[0]!.status_code, 200);
    t.equal(d.attempts[0]!.response_body, 'ok');
    t.type(d.attempts[0]!.duration_ms, 'number');
  }
  const five = await log(endpoint.id, '?limit=5');
  t.same(
    five.map((d) => d.id),
    sent.slice(100).reverse(),
  );
  const none = await log(endpoint.id, '?status=dead_lettered');
  t.same(none, []);
});

t.test('records older than 30 days are deleted, unless still being retried', async (t) => {
  const { id: merchantId } = await platform.merchant();
  const receiver = await startReceiver(t);
  const endpoint = await registerEndpoint(platform, merchantId, { url: receiver.url });
  const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
  const ids = {
    done: 'msg_0000000000000000000000done',
    active: 'msg_00000000000000000000active',
    recent: 'msg_00000000000000000000recent',
  };
  for (const [state, id] of Object.entries(ids)) {
    await platform.sql`insert into webhook_messages (id, merchant_id, type, body, created_at)
      values (${id}, ${merchantId}, 'payout.paid', '{}', ${state === 'recent' ? new Date().toISOString() : old})`;
    await platform.sql`insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, next_attempt_at, created_at)
      values (${`dlv_${id.slice(4)}`}, ${id}, ${endpoint.id}, ${merchantId}, ${state === 'active' ? 'retrying' : 'succeeded'},
              ${state === 'active' ? new Date(Date.now() + 86_400_000).toISOString() : null}, ${old})`;
  }
  const deleted = await deleteExpired(platform.sql, 30);
  t.equal(deleted, 1);
  const left = await platform.sql<
    { id: string }[]
  >`select id from webhook_messages where id in ${platform.sql(Object.values(ids))} order by id`;
  t.same(left.map((r) => r.id).sort(), [ids.active, ids.recent].sort());
  const [gone] = await platform.sql`select 1 from webhook_deliveries where message_id = ${ids.done}`;
  t.equal(gone, undefined, 'its deliveries went with it');
});
