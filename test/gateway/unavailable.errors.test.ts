import t from 'tap';
import { api } from '@platform/shared/api';
import { rpcSubject, type RpcRequest } from '@platform/shared/catalogue';
import { decodeJson } from '@platform/shared/nats';
import type { ApiResponse } from '../helpers/client.ts';
import { eventually, startPlatform } from '../helpers/platform.ts';
import { assertError, type Asserts } from './expect.ts';

const RPC_TIMEOUT_MS = 300;
const platform = await startPlatform(t, { env: { RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) } });
const { client } = await platform.merchant();

function assertUnavailable(t: Asserts, res: ApiResponse) {
  assertError(t, res, 503, 'UNAVAILABLE');
  const retryAfter = res.headers.get('retry-after') ?? '';
  t.match(retryAfter, /^\d+$/, `Retry-After is whole seconds (got ${retryAfter})`);
  t.ok(Number(retryAfter) >= 1, 'Retry-After is at least 1');
}

t.test(
  'with the service up, requests are answered (the failures below are caused by the service going away)',
  async (t) => {
    // The deadline is short on purpose: on a loaded machine a first call may miss it, so each is tried until it
    // is answered, which shows the service up before it goes away.
    let n = 0;
    await eventually(
      async () => (await client.get('/api/v1/affiliates')).status === 200 || undefined,
      10_000,
      'a list',
    );
    await eventually(
      async () =>
        (await client.post('/api/v1/affiliates', { email: `before${n++}@example.com` })).status === 201 || undefined,
      10_000,
      'a create',
    );
    t.pass('a list and a create answered');
  },
);

t.test('with the affiliates service closed, a request is 503 UNAVAILABLE with Retry-After', async (t) => {
  await platform.affiliates.close();
  assertUnavailable(t, await client.get('/api/v1/affiliates'));
  assertUnavailable(t, await client.post('/api/v1/affiliates', { email: 'during@example.com' }));
  // The checks in front of the service still answer as usual.
  assertError(t, await platform.client('svc_short').get('/api/v1/affiliates'), 401, 'UNAUTHORIZED');
  // The gateway itself stays ready: its own dependencies are up.
  t.equal((await fetch(`http://127.0.0.1:${platform.gateways[0]!.opsPort}/readyz`)).status, 200);
  const rows = await platform.sql`select email from affiliates where email = 'during@example.com'`;
  t.equal(rows.length, 0, 'nothing was created');
});

t.test('a service that receives the request but never answers gives 503 after RPC_TIMEOUT_MS', async (t) => {
  // A real NATS peer on the operation's subject that takes every request and never responds.
  const received: RpcRequest[] = [];
  const silent = platform.nc.subscribe(
    rpcSubject(platform.prefix, api.listAffiliates.service, api.listAffiliates.name),
    {
      callback: (_err, msg) => {
        received.push(decodeJson<RpcRequest>(msg.data));
      },
    },
  );
  t.teardown(() => silent.unsubscribe());
  await platform.nc.flush();

  const started = performance.now();
  const res = await client.get('/api/v1/affiliates?limit=5');
  const elapsed = performance.now() - started;
  assertUnavailable(t, res);
  t.equal(received.length, 1, 'the request reached the silent peer (a timeout, not "no responders")');
  t.equal(received[0]?.request_id, res.headers.get('x-request-id'), 'it carried the request id');
  t.same(received[0]?.query, { limit: '5' });
  const deadline = received[0]!.deadline;
  t.ok(
    deadline > Date.now() - 10_000 && deadline <= Date.now(),
    'with a deadline that has passed by the time of the 503',
  );
  t.ok(elapsed >= RPC_TIMEOUT_MS - 20, `waited for the timeout (${Math.round(elapsed)} ms)`);
  t.ok(elapsed < RPC_TIMEOUT_MS + 2700, `and not much longer (${Math.round(elapsed)} ms, generous bound)`);
});
