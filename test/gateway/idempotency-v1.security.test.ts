import t from 'tap';
import { revokePlatformKey } from '../../scripts/admin/platform-keys.ts';
import { startPayments } from '../payments/setup.ts';

// Idempotency keys on /v1 belong to the platform key that sends them.
const stack = await startPayments(t);
const { platform } = stack;

const postForm = (form: string, headers: Record<string, string>, key: string) =>
  fetch(`${platform.baseUrl}/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form,
  });

t.test('keys are per platform key: the test key and the live key never meet', async (t) => {
  const form = 'type=express&email=modes%40acme.example';
  const test = await postForm(form, { 'idempotency-key': 'per-mode' }, stack.testKey.key);
  const live = await postForm(form, { 'idempotency-key': 'per-mode' }, stack.liveKey.key);
  t.equal(test.status, 200);
  t.equal(live.status, 200);
  t.equal(live.headers.get('idempotent-replayed'), null, "the live key does not replay the test key's answer");
  const [a, b] = [
    (await test.json()) as { id: string; livemode: boolean },
    (await live.json()) as { id: string; livemode: boolean },
  ];
  t.not(a.id, b.id);
  t.equal(b.livemode, true);
});

t.test('a revoked platform key gets 401, not the replay of its stored answer', async (t) => {
  const form = 'type=express&email=revoked%40acme.example';
  const first = await postForm(form, { 'idempotency-key': 'before-revoke' }, stack.testKey.key);
  t.equal(first.status, 200);
  await revokePlatformKey(platform.sql, stack.testKey.id);
  // The gateway reuses a key lookup for at most KEY_CACHE_MS (1 s).
  await new Promise((r) => setTimeout(r, 1100));
  const after = await postForm(form, { 'idempotency-key': 'before-revoke' }, stack.testKey.key);
  t.equal(after.status, 401);
  t.equal(after.headers.get('idempotent-replayed'), null);
  t.notMatch(await after.text(), /revoked@acme/);
});
