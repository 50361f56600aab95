import t from 'tap';
import { runAdminWithEnv } from '../helpers/cli.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook as verify } from '../helpers/receiver.ts';
import { startWebhookPlatform } from '../helpers/webhooks.ts';

// The operator CLI's webhook commands, as a process against the platform's database with the dispatcher's
// environment; the in-process dispatcher delivers what the CLI creates (test events, replays).
t.setTimeout(300_000);
const { platform, env } = await startWebhookPlatform(t);
const admin = (...args: string[]) => runAdminWithEnv({ ...env, DATABASE_URL: platform.databaseUrl }, ...args);
const merchant = await platform.merchant();
const receiver = await startReceiver(t);

t.test('create, show, test, deliveries, rotate, disable and delete an endpoint from the CLI', async (t) => {
  const created = await admin(
    'webhook',
    'create',
    merchant.id,
    '--url',
    receiver.url,
    '--events',
    'affiliate.created,commission.created',
    '--description',
    'orders',
  );
  t.equal(created.code, 0, created.stderr);
  const endpoint = created.json;
  t.match(endpoint, {
    id: /^we_/,
    url: receiver.url,
    event_types: ['affiliate.created', 'commission.created'],
    enabled: true,
    description: 'orders',
  });
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/=]+$/, 'the secret is printed once, on create');
  const [stored] = await platform.sql<
    { secret_encrypted: string }[]
  >`select secret_encrypted from webhook_endpoints where id = ${endpoint.id}`;
  t.notOk(stored!.secret_encrypted.includes(endpoint.secret.slice(6)), 'stored encrypted, not as given');

  const shown = await admin('webhook', 'show', endpoint.id);
  t.equal(shown.code, 0, shown.stderr);
  t.equal(shown.json.id, endpoint.id);
  t.notOk(shown.stdout.includes(endpoint.secret), 'show never prints the secret');
  const listed = await admin('webhook', 'list', merchant.id);
  t.same(
    listed.json.map((e: { id: string }) => e.id),
    [endpoint.id],
  );
  t.notOk(listed.stdout.includes(endpoint.secret), 'list never prints the secret');

  const test = await admin('webhook', 'test', endpoint.id, '--event', 'commission.created');
  t.equal(test.code, 0, test.stderr);
  const first = await eventually(
    async () => receiver.received.find((h) => h.type === 'commission.created'),
    15_000,
    'the test event',
  );
  t.doesNotThrow(() => verify(endpoint.secret, first), 'the test event verifies with the secret the CLI printed');

  const deliveries = await eventually(
    async () => {
      const run = await admin('webhook', 'deliveries', endpoint.id);
      return run.json?.[0]?.status === 'succeeded' ? run.json : undefined;
    },
    15_000,
    'the delivery log',
  );
  t.equal(deliveries.length, 1);
  t.equal(deliveries[0].attempts.length, 1);
  t.equal(deliveries[0].attempts[0].status_code, 200);

  const rotated = await admin('webhook', 'rotate-secret', endpoint.id);
  t.equal(rotated.code, 0, rotated.stderr);
  t.match(rotated.json.secret, /^whsec_/);
  t.not(rotated.json.secret, endpoint.secret);
  await admin('webhook', 'test', endpoint.id, '--event', 'affiliate.created');
  const second = await eventually(
    async () => receiver.received.find((h) => h.type === 'affiliate.created'),
    15_000,
    'the second test event',
  );
  t.equal(String(second.headers['webhook-signature']).split(' ').length, 2, 'both secrets sign during rotation');
  t.doesNotThrow(() => verify(rotated.json.secret, second), 'verifies with the new secret');
  t.doesNotThrow(() => verify(endpoint.secret, second), 'and with the old one');

  const disabled = await admin('webhook', 'update', endpoint.id, '--enabled', 'false');
  t.equal(disabled.code, 0, disabled.stderr);
  t.equal(disabled.json.enabled, false);
  const refused = await admin('webhook', 'test', endpoint.id, '--event', 'affiliate.created');
  t.equal(refused.code, 2, 'a disabled endpoint gets no test event');
  t.match(refused.stderr, /admin: /);

  const deleted = await admin('webhook', 'delete', endpoint.id);
  t.equal(deleted.code, 0, deleted.stderr);
  t.same(deleted.json, { deleted: endpoint.id });
  const gone = await admin('webhook', 'show', endpoint.id);
  t.equal(gone.code, 2);
  t.match(gone.stderr, `no webhook endpoint ${endpoint.id}`);
});

t.test('the CLI refuses what the API refuses', async (t) => {
  const badEvents = await admin('webhook', 'create', merchant.id, '--url', receiver.url, '--events', 'order.created');
  t.equal(badEvents.code, 2);
  t.equal(badEvents.stdout, '');
  t.match(badEvents.stderr, /--events must name event types/);

  const noMerchant = await admin('webhook', 'create', 'mer_00000000000000000000000000', '--url', receiver.url);
  t.equal(noMerchant.code, 2);
  t.match(noMerchant.stderr, /no merchant/);

  // Without the loopback allowance (production settings), a URL resolving to loopback is refused.
  const strict = await runAdminWithEnv(
    { ...env, DATABASE_URL: platform.databaseUrl, WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOWED_CIDRS: '' },
    'webhook',
    'create',
    merchant.id,
    '--url',
    'https://127.0.0.1:9/hooks',
  );
  t.equal(strict.code, 2, strict.stderr);
  t.equal(strict.stdout, '');
  const [row] = await platform.sql<
    { count: number }[]
  >`select count(*)::int as count from webhook_endpoints where merchant_id = ${merchant.id}`;
  const count = row!.count;
  t.equal(count, 0, 'nothing was registered');
});
