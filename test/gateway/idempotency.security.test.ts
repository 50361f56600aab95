import t from 'tap';
import { createKey, revokeKey } from '../../scripts/admin/commands.ts';
import { createDashboardUser, sessionRequest, signInHttp } from '../helpers/dashboard.ts';
import { expectError } from '../helpers/errors.ts';
import { startPlatform } from '../helpers/platform.ts';

const platform = await startPlatform(t);
const alice = await platform.merchant({ name: 'Alice' });
const bob = await platform.merchant({ name: 'Bob' });

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

t.test("one Idempotency-Key used by two merchants: each gets its own object, never the other's answer", async (t) => {
  const a = await alice.client.post('/api/v1/affiliates', { email: 'alice-aff@example.com' }, withKey('shared-key'));
  const b = await bob.client.post('/api/v1/affiliates', { email: 'bob-aff@example.com' }, withKey('shared-key'));
  t.equal(a.status, 201);
  t.equal(b.status, 201, "Bob's key is not refused as a reuse of Alice's");
  t.equal(b.headers.get('idempotent-replayed'), null, "nor answered with Alice's affiliate");
  t.not(b.body.id, a.body.id);
  const bAgain = await bob.client.post('/api/v1/affiliates', { email: 'bob-aff@example.com' }, withKey('shared-key'));
  t.equal(bAgain.text, b.text, 'each replays its own');
  const aRows =
    await platform.sql`select 1 from affiliates where merchant_id = ${alice.id} and email = 'bob-aff@example.com'`;
  t.equal(aRows.length, 0);
});

t.test('keys are scoped to the API key: a second key of the same merchant does not replay the first', async (t) => {
  const second = await createKey(platform.sql, alice.id, 'read,write');
  const other = platform.client(second.key);
  const body = { email: 'per-key@example.com' };
  const first = await alice.client.post('/api/v1/affiliates', body, withKey('per-key'));
  t.equal(first.status, 201);
  const fromOtherKey = await other.post('/api/v1/affiliates', body, withKey('per-key'));
  t.equal(fromOtherKey.headers.get('idempotent-replayed'), null, 'not a replay');
  t.equal(fromOtherKey.status, 409, 'the service did the work and found the duplicate');
  t.not(fromOtherKey.body.error.message, undefined);
});

t.test("the gateway's own refusals come before the key and are not stored", async (t) => {
  const body = { email: 'after-refusals@example.com' };
  const unauthorized = await platform.client('svc_' + 'x'.repeat(43)).post('/api/v1/affiliates', body, withKey('k1'));
  t.equal(unauthorized.status, 401);
  const notJson = await alice.client.post('/api/v1/affiliates', undefined, {
    headers: { 'idempotency-key': 'k1', 'content-type': 'application/json' },
    raw: '{"email": ',
  });
  t.equal(notJson.status, 400);
  t.equal(notJson.body.error.message, 'The body is not valid JSON');
  const rows = await platform.sql`select 1 from idempotency_keys where key = 'k1'`;
  t.equal(rows.length, 0, 'nothing stored for the key');
  const ok = await alice.client.post('/api/v1/affiliates', body, withKey('k1'));
  t.equal(ok.status, 201, 'the corrected request is not refused as a reuse');
});

t.test('a revoked API key gets 401, not the replay of its stored answer', async (t) => {
  const { key, id } = await createKey(platform.sql, alice.id, 'read,write');
  const body = { email: 'revoked@example.com' };
  const first = await platform.client(key).post('/api/v1/affiliates', body, withKey('before-revoke'));
  t.equal(first.status, 201);
  await revokeKey(platform.sql, id);
  // The gateway reuses a key lookup for at most KEY_CACHE_MS (1 s).
  await new Promise((r) => setTimeout(r, 1100));
  const after = await platform.client(key).post('/api/v1/affiliates', body, withKey('before-revoke'));
  expectError(t, after, 401, 'UNAUTHORIZED', 'A valid API key is required: Authorization: Bearer svc_…');
  t.notMatch(after.text, /revoked@example\.com/);
});

t.test(
  'the stored answer is encrypted at rest, owned by the key id, with only the headers the operation set',
  async (t) => {
    const first = await bob.client.post('/api/v1/affiliates', { email: 'stored@example.com' }, withKey('stored'));
    const [row] = await platform.sql<{ headers: Record<string, string>; body: Buffer; owner: string }[]>`
    select headers, body, owner from idempotency_keys where key = 'stored'`;
    t.match(row!.body.toString(), /^v2:[\w-]+:[\w-]+:[\w-]+$/, 'AES-GCM, as every secret at rest');
    t.notMatch(row!.body.toString(), /stored@example\.com/, 'not the answer in clear');
    t.notMatch(row!.body.toString('base64'), new RegExp(Buffer.from(first.text).toString('base64').slice(0, 20)));
    t.same(Object.keys(row!.headers), ['content-type'], 'only the header the operation set');
    t.equal(row!.owner, bob.keyId, 'owned by the key id, never the key');
    t.notMatch(JSON.stringify(row), new RegExp(bob.key), 'the API key itself is not stored');
    const again = await bob.client.post('/api/v1/affiliates', { email: 'stored@example.com' }, withKey('stored'));
    t.equal(again.text, first.text, 'and the replay is still the same bytes');
  },
);

t.test("the dashboard's calls are keyed per dashboard user", async (t) => {
  await createDashboardUser(platform.sql, alice.id, 'owner@alice.example');
  await createDashboardUser(platform.sql, alice.id, 'clerk@alice.example');
  const owner = await signInHttp(platform.baseUrl, 'owner@alice.example');
  const clerk = await signInHttp(platform.baseUrl, 'clerk@alice.example');
  const post = (session: typeof owner, email: string) =>
    fetch(`${platform.baseUrl}/api/v1/affiliates`, {
      method: 'POST',
      headers: {
        cookie: `dash_session=${session.cookie}`,
        'x-csrf-token': session.csrf!,
        'content-type': 'application/json',
        'idempotency-key': 'from-the-dashboard',
      },
      body: JSON.stringify({ email }),
    });
  const first = await post(owner, 'dash@example.com');
  const firstText = await first.text();
  t.equal(first.status, 201);
  const again = await post(owner, 'dash@example.com');
  t.equal(again.headers.get('idempotent-replayed'), 'true', "the same user's retry replays");
  t.equal(await again.text(), firstText);
  const otherUser = await post(clerk, 'clerk-aff@example.com');
  t.equal(otherUser.status, 201, "another user's key of the same name is another key");
  t.equal(otherUser.headers.get('idempotent-replayed'), null);
  const listed = await sessionRequest(platform.baseUrl, owner, 'GET', '/api/v1/affiliates?email=clerk-aff@example.com');
  t.equal(listed.body.data.length, 1);
});
