import t from 'tap';
import { api } from '@platform/shared/api';
import { hashBody } from '@platform/shared/body-hash';
import { rpcSubject, type RpcRequest } from '@platform/shared/catalogue';
import { encodeJson } from '@platform/shared/nats';
import { eventually, startPlatform } from '../helpers/platform.ts';

// A keyed request whose work commits, and whose reply is then never kept on its claim (the service crashed right
// after COMMIT, or its pool stalled past the keep's bound): the claim was marked committed in the work's own
// transaction, so when its lease (locked_until) passes, a retry with the key must not take it over and do the work
// again; it is refused as in progress until the reply is there, then answered from it.
const platform = await startPlatform(t, { env: { RPC_TIMEOUT_MS: '1500' } });
const { sql } = platform;
const { id: merchantId, keyId, client } = await platform.merchant();
const withKey = (k: string) => ({ headers: { 'idempotency-key': k } });
// The short RPC bound makes a cold stack's first answers 503 on a loaded machine: warm it first, so that the 409
// below is the claim's answer and not the bound's.
await eventually(async () => ((await client.get('/api/v1/affiliates')).status === 200 ? true : undefined), 30_000);
const created = async (email: string) =>
  (await sql<{ id: string }[]>`select id from affiliates where merchant_id = ${merchantId} and email = ${email}`).map(
    (r) => r.id,
  );

/** Asks the affiliates service directly, as the gateway does, for a request that holds the key's claim. */
async function createHoldingClaim(key: string, requestId: string, body: Record<string, unknown>) {
  // The claim as the gateway makes it (middleware.ts): the fingerprint of the request the retry repeats.
  const fingerprint = hashBody({ method: 'POST', path: '/api/v1/affiliates', context: '', body });
  await sql`
    insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
    values (${keyId}, ${key}, ${fingerprint}, ${requestId}, now() + interval '1 minute')`;
  const request: RpcRequest = {
    request_id: requestId,
    merchant_id: merchantId,
    key_id: keyId,
    deadline: Date.now() + 5000,
    params: {},
    query: {},
    body,
    idempotency: { owner: keyId, key },
  };
  platform.nc.publish(rpcSubject(platform.prefix, 'affiliates', api.createAffiliate.name), encodeJson(request));
}

t.test(
  'a committed claim whose reply was lost is never taken over: the retry does not do the work again',
  async (t) => {
    const body = { email: 'committed@example.com' };
    await createHoldingClaim('aff-committed', 'req_committed', body);
    const [kept] = await eventually(async () => {
      const rows = await sql<{ committed: boolean; headers: unknown; body: Buffer }[]>`
      select committed_at is not null as committed, reply_headers as headers, reply_body as body
      from idempotency_keys where key = 'aff-committed' and reply_headers is not null`;
      return rows.length ? rows : undefined;
    });
    const made = await created(body.email);
    t.equal(made.length, 1, 'the service created the affiliate');
    t.ok(kept!.committed, 'and marked the claim committed with it');

    // As if the service had stopped right after COMMIT: no reply kept, and the claim's lease over.
    await sql`
    update idempotency_keys set reply_headers = null, reply_body = null, locked_until = now() - interval '1 second'
    where key = 'aff-committed'`;
    const retried = await client.post('/api/v1/affiliates', body, withKey('aff-committed'));
    t.equal(retried.status, 409);
    t.match(retried.body.error.message, /still in progress/, 'the retry is refused as in progress');
    const [claim] = await sql<
      { request_id: string }[]
    >`select request_id from idempotency_keys where key = 'aff-committed'`;
    t.equal(
      claim!.request_id,
      'req_committed',
      'the claim is still the first request’s: the service was not asked again',
    );
    t.same(await created(body.email), made, 'and the affiliate is not created again');

    // The reply, once kept (a late keep), answers the retry.
    await sql`
    update idempotency_keys set reply_headers = ${sql.json(kept!.headers as never)}, reply_body = ${kept!.body}
    where key = 'aff-committed'`;
    const answered = await client.post('/api/v1/affiliates', body, withKey('aff-committed'));
    t.equal(answered.status, 201);
    t.equal(answered.body.id, made[0], 'the affiliate the first request created');
    t.equal(answered.headers.get('idempotent-replayed'), 'true');
    t.same(await created(body.email), made, 'still one');
  },
);

t.test('a request that wrote nothing leaves its claim unmarked, to lapse as before', async (t) => {
  // Refused before any write (no such parent): the reply is kept, but the claim is not marked committed.
  const body = { email: 'nothing@example.com', parent_email: 'nobody@example.com' };
  await createHoldingClaim('aff-nothing', 'req_nothing', body);
  const [row] = await eventually(async () => {
    const rows = await sql<{ committed: boolean }[]>`
      select committed_at is not null as committed from idempotency_keys
      where key = 'aff-nothing' and reply_headers is not null`;
    return rows.length ? rows : undefined;
  });
  t.notOk(row!.committed, 'a request that wrote nothing does not mark its claim');
  t.same(await created(body.email), []);
});
