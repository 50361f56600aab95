import t from 'tap';
import { holdRows, waitsOnLock } from '../helpers/locks.ts';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { api } from '@platform/shared/api';
import { rpcSubject, type RpcRequest } from '@platform/shared/catalogue';
import { encodeJson } from '@platform/shared/nats';
import { captureLogger, eventually, startPlatform } from '../helpers/platform.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

// POST /api/v1/affiliates with an Idempotency-Key while another transaction holds the parent affiliate's row (the
// child's insert waits on it for its foreign key): the gateway answers 503 at RPC_TIMEOUT_MS, and the affiliate must
// then be created once, and the retry with the key answer it, not a conflict with itself. The services' statement
// and lock timeouts are above the gateway's deadline here, so that the gateway gives up first.
const platform = await startPlatform(t, {
  env: { RPC_TIMEOUT_MS: '1500', DATABASE_LOCK_TIMEOUT_MS: '10000', DATABASE_STATEMENT_TIMEOUT_MS: '10000' },
});
const { sql } = platform;
const { id: merchantId, key, client } = await platform.merchant();
const withKey = (k: string) => ({ headers: { 'idempotency-key': k } });
// The setup's parent, under the same short deadline: on a loaded machine its first try may answer 503, and the
// retry with its key creates it once or replays it.
const parent = await eventually(
  async () => {
    const res = await client.post('/api/v1/affiliates', { email: 'parent@example.com' }, withKey('setup-parent'));
    return res.status === 201 ? res : undefined;
  },
  30_000,
  'the parent affiliate created',
);

const holdParent = () =>
  holdRows(sql, (tx) => tx`select 1 from affiliates where id = ${parent.body.id as string} for update`);

/** Resolves once the affiliates service's statement waits on a lock: the request reached the service. */
const serviceWaitsOnLock = () => waitsOnLock(sql, 'affiliates');

const children = async (email: string) =>
  (await sql<{ id: string }[]>`select id from affiliates where merchant_id = ${merchantId} and email = ${email}`).map(
    (r) => r.id,
  );

t.test('a 503 at the deadline means not done: the retry with the key creates the affiliate once', async (t) => {
  const body = { email: 'deadline@example.com', parent_email: 'parent@example.com' };
  const release = await holdParent();
  const first = client.post('/api/v1/affiliates', body, withKey('aff-deadline'));
  await serviceWaitsOnLock();
  const answered = await first;
  t.equal(answered.status, 503);
  t.equal(answered.body.error.code, 'UNAVAILABLE');
  await release();
  // The service's insert goes on once the row is free and its transaction rolls back at the deadline check; the
  // service then gives the key's claim up.
  await eventually(async () =>
    (await sql`select 1 from idempotency_keys where key = 'aff-deadline'`).length === 0 ? true : undefined,
  );
  t.same(await children(body.email), [], 'the first request created nothing');

  const retried = await client.post('/api/v1/affiliates', body, withKey('aff-deadline'));
  t.equal(retried.status, 201, 'the retry creates it');
  t.same(await children(body.email), [retried.body.id], 'once');
  const again = await client.post('/api/v1/affiliates', body, withKey('aff-deadline'));
  t.equal(again.text, retried.text, 'a later retry replays it');
});

t.test('a gateway cut off from the reply: the service keeps it on the key, the retry answers it', async (t) => {
  const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: Number(new URL(platform.env['NATS_URL']!).port) });
  const cutOff = await startGateway(
    loadGatewayConfig({ ...platform.env, NATS_URL: `nats://127.0.0.1:${proxy.port}` }),
    captureLogger('gateway-cut-off').log,
  );
  t.teardown(async () => {
    await proxy.restore();
    await cutOff.close();
  });
  const body = { email: 'cut-off@example.com', parent_email: 'parent@example.com' };
  const release = await holdParent();
  const first = platform
    .client(key, `http://127.0.0.1:${cutOff.port}`)
    .post('/api/v1/affiliates', body, withKey('aff-cut-off'));
  await serviceWaitsOnLock();
  proxy.blackhole();
  await release();
  t.equal((await first).status, 503, 'the cut-off gateway answered 503 at RPC_TIMEOUT_MS');
  const made = await children(body.email);
  t.equal(made.length, 1, 'the service created the affiliate before the deadline');
  const [kept] = await sql<{ status: number | null; body: Buffer }[]>`
    select status, reply_body as body from idempotency_keys where key = 'aff-cut-off'`;
  t.equal(kept!.status, null, 'the key is still claimed');
  t.notOk(kept!.body.includes(made[0]!), 'the reply the service kept on it is sealed');

  const retried = await client.post('/api/v1/affiliates', body, withKey('aff-cut-off'));
  t.equal(retried.status, 201, 'the retry through the other gateway answers what the service replied');
  t.equal(retried.body.id, made[0]);
  t.equal(retried.headers.get('idempotent-replayed'), 'true');
  t.same(await children(body.email), made, 'and creates no other');
  const again = await client.post('/api/v1/affiliates', body, withKey('aff-cut-off'));
  t.equal(again.text, retried.text, 'the answer is stored: later retries replay it');
  const [stored] = await sql<{ body: Buffer | null }[]>`
    select reply_body as body from idempotency_keys where key = 'aff-cut-off'`;
  t.equal(stored!.body, null, 'the kept reply is cleared once the answer is stored');
});

t.test('a request that reaches the service past its deadline does nothing and gives its claim up', async (t) => {
  // As the gateway leaves it after its 503: the key claimed by the request, whose outcome it did not see.
  const { keyId } = await platform.merchant();
  await sql`
    insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
    values (${keyId}, 'aff-expired', '\\x00', 'req_expired', now() + interval '1 minute')`;
  const request: RpcRequest = {
    request_id: 'req_expired',
    merchant_id: merchantId,
    key_id: keyId,
    deadline: Date.now() - 1,
    params: {},
    query: {},
    body: { email: 'expired@example.com' },
    idempotency: { owner: keyId, key: 'aff-expired' },
  };
  platform.nc.publish(rpcSubject(platform.prefix, 'affiliates', api.createAffiliate.name), encodeJson(request));
  await eventually(async () =>
    (await sql`select 1 from idempotency_keys where key = 'aff-expired'`).length === 0 ? true : undefined,
  );
  t.pass('the claim was given up: a retry with the key does the work at once');
  t.same(await children('expired@example.com'), [], 'nothing created');
});
