import t, { type Test } from 'tap';
import { deleteExpiredKeys } from '@platform/gateway/http/idempotency/queries';
import { operations } from '@platform/shared/api';
import type { ApiResponse } from '../helpers/client.ts';
import { startWebhookPlatform } from '../helpers/webhooks.ts';

const { platform } = await startWebhookPlatform(t);
const { id: merchantId, client } = await platform.merchant();

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

const affiliateCount = async (email: string) => {
  const [row] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from affiliates where merchant_id = ${merchantId} and lower(email) = lower(${email})`;
  return row!.n;
};

/** The replay carries the first answer's status and bytes, marked as a replay of the first request. */
function assertReplay(t: Test, first: ApiResponse, replay: ApiResponse) {
  t.equal(replay.status, first.status, 'the same status');
  t.equal(replay.text, first.text, 'the same body, byte for byte');
  t.equal(replay.headers.get('content-type'), first.headers.get('content-type'), 'the same content type');
  t.equal(replay.headers.get('idempotent-replayed'), 'true', 'Idempotent-Replayed: true');
  t.equal(
    replay.headers.get('original-request'),
    first.headers.get('x-request-id'),
    'Original-Request names the first',
  );
  t.not(replay.headers.get('x-request-id'), first.headers.get('x-request-id'), 'the replay has its own request id');
  t.ok(replay.headers.get('ratelimit-remaining'), 'and its own rate window');
}

t.test('the same POST twice with one key creates one affiliate and replays the first answer', async (t) => {
  const body = { email: 'once@example.com', display_name: 'Once' };
  const first = await client.post('/api/v1/affiliates', body, withKey('create-once'));
  t.equal(first.status, 201);
  t.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is not a replay');
  const again = await client.post('/api/v1/affiliates', body, withKey('create-once'));
  assertReplay(t, first, again);
  t.equal(await affiliateCount('once@example.com'), 1, 'one affiliate');
});

t.test('the same fields in another order and other white space are the same body', async (t) => {
  const first = await client.post(
    '/api/v1/affiliates',
    { email: 'order@example.com', display_name: 'Order' },
    withKey('k-order'),
  );
  t.equal(first.status, 201);
  const again = await client.post('/api/v1/affiliates', undefined, {
    headers: { 'idempotency-key': 'k-order', 'content-type': 'application/json' },
    raw: '{ "display_name": "Order",\n  "email": "order@example.com" }',
  });
  assertReplay(t, first, again);
  t.equal(await affiliateCount('order@example.com'), 1);
});

t.test('20 concurrent requests with one key create one affiliate and all answer it', async (t) => {
  const body = { email: 'crowd@example.com' };
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => client.post('/api/v1/affiliates', body, withKey('crowd'))),
  );
  t.same(
    answers.map((a) => a.status),
    Array(20).fill(201),
    'every request answers 201',
  );
  t.equal(new Set(answers.map((a) => a.text)).size, 1, 'every answer is the same bytes');
  const fresh = answers.filter((a) => a.headers.get('idempotent-replayed') === null);
  t.equal(fresh.length, 1, 'one request did the work, 19 replayed it');
  for (const a of answers.filter((x) => x !== fresh[0]))
    t.equal(a.headers.get('original-request'), fresh[0]!.headers.get('x-request-id'));
  t.equal(await affiliateCount('crowd@example.com'), 1, 'one affiliate');
});

t.test("a refusal the service answered is stored and replayed too (Stripe replays an endpoint's 4xx)", async (t) => {
  const body = { email: 'not-an-email' };
  const first = await client.post('/api/v1/affiliates', body, withKey('bad-body'));
  t.equal(first.status, 400);
  t.equal(first.body.error.code, 'INVALID_INPUT');
  const again = await client.post('/api/v1/affiliates', body, withKey('bad-body'));
  assertReplay(t, first, again);
  t.equal(
    again.body.error.request_id,
    first.headers.get('x-request-id'),
    "the stored body keeps the first request's id",
  );
});

t.test('a POST without a body (rotate a webhook secret) is replayed: the secret rotates once', async (t) => {
  const endpoint = await client.post('/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/in' });
  t.equal(endpoint.status, 201);
  const path = `/api/v1/webhook_endpoints/${endpoint.body.id}/rotate_secret`;
  const first = await client.post(path, undefined, withKey('rotate-1'));
  t.equal(first.status, 200, first.text);
  const again = await client.post(path, undefined, withKey('rotate-1'));
  assertReplay(t, first, again);
  const [stored] = await platform.sql<{ body: Buffer }[]>`select body from idempotency_keys where key = 'rotate-1'`;
  t.notMatch(stored!.body.toString(), first.body.secret, 'the secret shown once is not kept in clear');
  const other = await client.post(path, undefined, withKey('rotate-2'));
  t.equal(other.status, 200);
  t.not(other.body.secret, first.body.secret, 'another key rotates again');
});

t.test('requests without the header are not idempotent and store nothing', async (t) => {
  const [before] = await platform.sql<{ n: number }[]>`select count(*)::int as n from idempotency_keys`;
  const a = await client.post('/api/v1/affiliates', { email: 'plain@example.com' });
  const b = await client.post('/api/v1/affiliates', { email: 'plain@example.com' });
  t.equal(a.status, 201);
  t.equal(b.status, 409, 'the second is the duplicate it is');
  t.equal(a.headers.get('idempotent-replayed'), null);
  const [after] = await platform.sql<{ n: number }[]>`select count(*)::int as n from idempotency_keys`;
  t.equal(after!.n, before!.n, 'no key stored');
});

t.test('a GET with the header ignores it', async (t) => {
  const first = await client.get('/api/v1/affiliates?limit=1', withKey('get-key'));
  const second = await client.get('/api/v1/affiliates?limit=1', withKey('get-key'));
  t.equal(first.status, 200);
  t.equal(second.headers.get('idempotent-replayed'), null);
  const rows = await platform.sql`select 1 from idempotency_keys where key = 'get-key'`;
  t.equal(rows.length, 0);
});

t.test('after 24 hours the key is new again, and the purge deletes it', async (t) => {
  const body = { email: 'daily@example.com' };
  const first = await client.post('/api/v1/affiliates', body, withKey('daily'));
  t.equal(first.status, 201);
  const withinDay = await client.post('/api/v1/affiliates', body, withKey('daily'));
  t.equal(withinDay.headers.get('idempotent-replayed'), 'true', 'replayed within the 24 hours');

  await platform.sql`
    update idempotency_keys set created_at = created_at - interval '24 hours' where key = 'daily'`;
  const nextDay = await client.post('/api/v1/affiliates', body, withKey('daily'));
  t.equal(nextDay.status, 409, 'the work is done again: the affiliate exists, so this time it is a duplicate');
  t.equal(nextDay.headers.get('idempotent-replayed'), null, 'not a replay');
  const replayOfNew = await client.post('/api/v1/affiliates', body, withKey('daily'));
  t.equal(replayOfNew.text, nextDay.text, "and the key now replays the new request's answer");

  await platform.sql`
    update idempotency_keys set created_at = created_at - interval '24 hours' where key = 'daily'`;
  t.equal(await deleteExpiredKeys(platform.sql, 1000), 1, 'the purge deletes the expired key');
  const rows = await platform.sql`select 1 from idempotency_keys where key = 'daily'`;
  t.equal(rows.length, 0);
});

t.test('the OpenAPI document lists Idempotency-Key and the replay headers on every POST, and only there', async (t) => {
  const doc = (await (await fetch(`${platform.baseUrl}/api/v1/openapi`)).json()) as {
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses: object }>>;
  };
  for (const op of operations.filter((o) => o.path.startsWith('/api/v1/'))) {
    const entry = doc.paths[op.path]![op.method]!;
    const documented = (entry.parameters ?? []).some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
    t.equal(documented, op.method === 'post', `${op.operationId}: Idempotency-Key ${op.method === 'post'}`);
    if (op.method !== 'post') continue;
    t.ok('409' in entry.responses, `${op.operationId}: 409 documented`);
    const success = (entry.responses as Record<string, { headers?: object }>)[String(op.success[0]!.status)]!;
    t.ok(success.headers && 'Idempotent-Replayed' in success.headers, `${op.operationId}: Idempotent-Replayed`);
  }
});

t.test('the gateway counts what became of the keyed requests', async (t) => {
  const first = await client.post('/api/v1/affiliates', { email: 'counted@example.com' }, withKey('counted'));
  t.equal(first.status, 201);
  const metrics = async () => {
    const text = await (await fetch(`http://127.0.0.1:${platform.gateways[0]!.opsPort}/metrics`)).text();
    const read = (outcome: string) =>
      Number(
        new RegExp(`^idempotency_requests_total\\{[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
      );
    return { claimed: read('claimed'), replayed: read('replayed') };
  };
  const before = await metrics();
  await client.post('/api/v1/affiliates', { email: 'counted@example.com' }, withKey('counted'));
  const after = await metrics();
  t.equal(after.replayed, before.replayed + 1, 'one more replay');
  t.equal(after.claimed, before.claimed, 'and no claim');
  t.ok(before.claimed >= 1);
});
