import { randomBytes } from 'node:crypto';
import t from 'tap';
import { WEBHOOK_MAX_ATTEMPTS } from '@platform/shared/webhooks';
import { UNSIGNABLE_ERROR } from '@platform/dispatcher/attempts';
import { runAdminWithEnv } from '../helpers/cli.ts';
import { eventually, startPlatform } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook, type ReceivedWebhook } from '../helpers/receiver.ts';
import { registerEndpoint, startDispatcher, type LoggedDelivery } from '../helpers/webhooks.ts';

// An endpoint whose secret the dispatcher cannot decrypt (it runs with another ENCRYPTION_KEY) gets failed attempts
// in its delivery log, with the reason, retried by the table and dead-lettered after it, and one log line, not one
// per attempt. With the old key listed in ENCRYPTION_KEYS_PREVIOUS the secret opens again, and `admin secrets
// re-encrypt` moves it under the new key, after which the old key is no longer needed.
t.setTimeout(170_000);

// The endpoint's secret is encrypted under the key every test process uses by default (APP_ENV=test, no
// ENCRYPTION_KEY): the development key.
const OLD_KEY = Buffer.from('development-only-key-not-secret!', 'utf8').toString('base64');
const NEW_KEY = randomBytes(32).toString('base64');
// The whole table (5 s … 24 h, 75.9 h in all) shrunk to about 27 s.
const FAST_TABLE = { WEBHOOK_BACKOFF_SCALE: '0.0001' };

const platform = await startPlatform(t);
const { id: merchantId, client } = await platform.merchant();
const receiver = await startReceiver(t);
const endpoint = await registerEndpoint(platform, merchantId, { url: receiver.url, event_types: ['payout.failed'] });
const deliveriesOf = async () =>
  (await client.get(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries`)).body.data as LoggedDelivery[];
const verify = (hook: ReceivedWebhook) => verifyWebhook(endpoint.secret, hook);
let deliveryId = '';

t.test(
  'under a key that does not open the secret: failed attempts with the reason, then dead-lettered after the table',
  async (t) => {
    const { logs, close } = await startDispatcher(t, platform, { ENCRYPTION_KEY: NEW_KEY, ...FAST_TABLE });
    const sent = await client.post(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { event_type: 'payout.failed' });
    t.equal(sent.status, 201);
    deliveryId = sent.body.id;
    const [dead] = await eventually(
      async () => {
        const ds = await deliveriesOf();
        return ds.length === 1 && ds[0]!.status === 'dead_lettered' ? ds : undefined;
      },
      90_000,
      'the delivery dead-lettered',
    );
    t.match(dead, {
      id: deliveryId,
      status: 'dead_lettered',
      dead_letter_reason: 'max_attempts',
      attempt_count: WEBHOOK_MAX_ATTEMPTS,
    });
    t.equal(dead!.attempts.length, WEBHOOK_MAX_ATTEMPTS, 'every attempt is in the delivery log');
    t.same(
      dead!.attempts.map((a) => ({ status_code: a.status_code, error: a.error, response_body: a.response_body })),
      Array(WEBHOOK_MAX_ATTEMPTS).fill({ status_code: null, error: UNSIGNABLE_ERROR, response_body: '' }),
      'each failed for the reason, with nothing of the secret',
    );
    t.equal(receiver.received.length, 0, 'nothing unsigned was sent');
    const complaints = logs.filter((l) => /secret cannot be used to sign/.test(l));
    t.equal(complaints.length, 1, `logged once for ${WEBHOOK_MAX_ATTEMPTS} attempts`);
    t.match(complaints[0], new RegExp(`"endpoint_id":"${endpoint.id}".*"reason":"undecryptable"`));
    t.notOk(
      logs.some((l) => l.includes(endpoint.secret) || l.includes(endpoint.secret.slice(6))),
      'no log line holds the secret',
    );
    const [row] = await platform.sql<{ enabled: boolean; consecutive_failures: number }[]>`
    select enabled, consecutive_failures from webhook_endpoints where id = ${endpoint.id}`;
    t.same(
      row,
      { enabled: true, consecutive_failures: WEBHOOK_MAX_ATTEMPTS },
      'the failures count toward the endpoint threshold',
    );
    await close();
  },
);

t.test('with the old key in ENCRYPTION_KEYS_PREVIOUS the secret opens: a replay is delivered, signed', async (t) => {
  const { close } = await startDispatcher(t, platform, {
    ENCRYPTION_KEY: NEW_KEY,
    ENCRYPTION_KEYS_PREVIOUS: OLD_KEY,
    ...FAST_TABLE,
  });
  const replay = await client.post(`/api/v1/webhook_deliveries/${deliveryId}/replay`);
  t.equal(replay.status, 200);
  t.same(replay.body, { replayed: 1 });
  await eventually(async () => (receiver.received.length === 1 ? true : undefined), 20_000, 'the replayed delivery');
  t.ok(verify(receiver.received[0]!), 'signed with the endpoint secret');
  await close();
});

t.test('admin secrets re-encrypt moves the secret under the new key; then the old key is not needed', async (t) => {
  const env = { DATABASE_URL: platform.databaseUrl, ENCRYPTION_KEY: NEW_KEY, ENCRYPTION_KEYS_PREVIOUS: OLD_KEY };
  const run = await runAdminWithEnv(env, 'secrets', 're-encrypt');
  t.equal(run.code, 0, run.stderr);
  const moved = (re_encrypted: number) => ({ re_encrypted, already_current: 0, undecryptable: [], changing: [] });
  t.same(run.json, {
    columns: [
      { column: 'webhook_endpoints.secret_encrypted', ...moved(1) },
      { column: 'webhook_endpoints.previous_secret_encrypted', ...moved(0) },
      { column: 'vault_secrets.ciphertext', ...moved(0) },
      { column: 'payment_accounts.bank_account_encrypted', ...moved(0) },
      { column: 'idempotency_keys.body', ...moved(0) },
      { column: 'idempotency_keys.reply_body', ...moved(0) },
      { column: 'mails.content_encrypted', ...moved(0) },
    ],
  });
  t.notOk(run.stdout.includes(endpoint.secret.slice(6)), 'the output holds no secret');
  const again = await runAdminWithEnv(env, 'secrets', 're-encrypt');
  t.equal(again.code, 0);
  t.match(again.json.columns[0], { re_encrypted: 0, already_current: 1 }, 'a second run has nothing to do');

  const { close } = await startDispatcher(t, platform, { ENCRYPTION_KEY: NEW_KEY, ...FAST_TABLE });
  const replay = await client.post(`/api/v1/webhook_deliveries/${deliveryId}/replay`);
  t.equal(replay.status, 200);
  await eventually(async () => (receiver.received.length === 2 ? true : undefined), 20_000, 'the second replay');
  t.ok(verify(receiver.received[1]!), 'signed under the new key alone');
  await close();

  const unknown = await runAdminWithEnv(
    { DATABASE_URL: platform.databaseUrl, ENCRYPTION_KEY: randomBytes(32).toString('base64') },
    'secrets',
    're-encrypt',
  );
  t.equal(unknown.code, 1, 'a key that opens nothing fails the command');
  t.same(unknown.json.columns[0].undecryptable, [endpoint.id], 'naming the row, not its value');
  t.match(unknown.stderr, /1 secret\(s\) could not be re-encrypted/);
});
