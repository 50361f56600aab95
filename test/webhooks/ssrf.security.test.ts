import t from 'tap';
import { request } from 'undici';
import { createAddressPolicy, isPublicAddress } from '@platform/dispatcher/domain/addresses';
import { createGuardedAgent, resolveAllowed } from '@platform/dispatcher/ssrf';
import { eventually, sleep } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { registerEndpoint, startWebhookPlatform, type LoggedDelivery } from '../helpers/webhooks.ts';

t.test('what counts as a public address', async (t) => {
  const refused = [
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.100.100.200',
    '169.254.169.254',
    '169.254.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    'not-an-ip',
  ];
  for (const a of refused) t.equal(isPublicAddress(a), false, `${a} is not public`);
  for (const a of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    t.equal(isPublicAddress(a), true, `${a} is public`);
  }
});

t.test('policies: development allows http and loopback; test and production only what is configured', async (t) => {
  const dev = createAddressPolicy({ appEnv: 'development' });
  t.equal(dev.allowHttp, true);
  t.equal(dev.allows('127.0.0.1'), true);
  t.equal(dev.allows('::1'), true);
  t.equal(dev.allows('10.0.0.1'), false, 'development allows loopback, not every private range');
  const prod = createAddressPolicy({ appEnv: 'production' });
  t.equal(prod.allowHttp, false);
  t.equal(prod.allows('127.0.0.1'), false);
  t.equal(prod.allows('8.8.8.8'), true);
  const listed = createAddressPolicy({ appEnv: 'test', allowHttp: true, allowedCidrs: '127.0.0.0/8, 10.20.0.0/16' });
  t.equal(listed.allows('127.0.0.1'), true);
  t.equal(listed.allows('10.20.3.4'), true);
  t.equal(listed.allows('10.21.0.1'), false);
  t.equal(listed.allows('::ffff:127.0.0.1'), true, 'a mapped address is judged as the IPv4 it carries');
  t.throws(() => createAddressPolicy({ appEnv: 'test', allowedCidrs: '10.0.0.0/40' }), /not a CIDR/);
  await t.rejects(resolveAllowed('localhost', prod), /localhost resolves to .*not a public address/);
  t.same(
    await resolveAllowed('localhost', dev)
      .then((r) => r.address)
      .then((a) => ['127.0.0.1', '::1'].includes(a)),
    true,
  );
});

t.test('the guarded agent refuses at connection time and pins what it checked', async (t) => {
  const receiver = await startReceiver(t);
  const strict = createGuardedAgent(createAddressPolicy({ appEnv: 'test', allowHttp: true }), {
    connectTimeoutMs: 1000,
  });
  const open = createGuardedAgent(
    createAddressPolicy({ appEnv: 'test', allowHttp: true, allowedCidrs: '127.0.0.0/8' }),
    { connectTimeoutMs: 1000 },
  );
  t.teardown(() => Promise.all([strict.close(), open.close()]));
  await t.rejects(
    request(receiver.url, { method: 'POST', body: '{}', dispatcher: strict }),
    /127\.0\.0\.1 is not a public address/,
  );
  await t.rejects(
    request(`http://localhost:${receiver.port}/hooks`, { method: 'POST', body: '{}', dispatcher: strict }),
    /localhost resolves to .* not a public address/,
  );
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');
  const ok = await request(`http://localhost:${receiver.port}/hooks`, { method: 'POST', body: '{}', dispatcher: open });
  t.equal(ok.statusCode, 200);
  await ok.body.text();
  t.equal(receiver.received.length, 1);
});

// A dispatcher as it runs outside development: https only, public addresses only.
const { platform } = await startWebhookPlatform(t, { WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOWED_CIDRS: '' });
const { client, id: merchantId } = await platform.merchant();

t.test('outside development, registration refuses non-public and non-https URLs', async (t) => {
  const cases: [string, string][] = [
    ['http://93.184.215.14/hooks', 'must be an https URL'],
    ['https://127.0.0.1/hooks', '127.0.0.1 is not a public address'],
    ['https://localhost/hooks', 'resolves to'],
    ['https://10.0.0.5/hooks', '10.0.0.5 is not a public address'],
    ['https://192.168.0.10/hooks', '192.168.0.10 is not a public address'],
    ['https://100.64.1.1/hooks', '100.64.1.1 is not a public address'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is not a public address'],
    ['https://0.0.0.0/hooks', '0.0.0.0 is not a public address'],
    ['https://[::1]/hooks', '::1 is not a public address'],
    ['https://[fd00:ec2::254]/hooks', 'fd00:ec2::254 is not a public address'],
    ['https://[fe80::1]/hooks', 'fe80::1 is not a public address'],
    ['https://[::ffff:127.0.0.1]/hooks', 'is not a public address'],
    ['https://user:pw@93.184.215.14/hooks', 'must not carry credentials'],
    ['not a url', 'must be an absolute URL'],
    ['ftp://93.184.215.14/x', 'must be an https URL'],
  ];
  for (const [url, message] of cases) {
    const res = await client.post('/api/v1/webhook_endpoints', { url });
    t.equal(res.status, 400, url);
    t.equal(res.body.error.code, 'INVALID_INPUT');
    t.equal(res.body.error.details.length, 1);
    t.equal(res.body.error.details[0].path, 'url');
    t.match(res.body.error.details[0].message, message, url);
  }
  const created = await client.post('/api/v1/webhook_endpoints', { url: 'https://93.184.215.14/hooks' });
  t.equal(created.status, 201, 'a public https URL is accepted');
  const patched = await client.patch(`/api/v1/webhook_endpoints/${created.body.id}`, { url: 'https://10.1.1.1/x' });
  t.equal(patched.status, 400, 'and the same check guards updates');
  t.equal(patched.body.error.details[0].path, 'url');
  const [stored] = await platform.sql<
    { n: number }[]
  >`select count(*)::int as n from webhook_endpoints where merchant_id = ${merchantId}`;
  t.equal(stored!.n, 1, 'nothing refused was stored');
});

t.test('an address that turned private after registration is refused at connection time', async (t) => {
  const receiver = await startReceiver(t);
  // Registered while allowed (as if the name resolved publicly then); the running dispatcher allows nothing private.
  const byIp = await registerEndpoint(platform, merchantId, { url: receiver.url, event_types: ['payout.paid'] });
  const byName = await registerEndpoint(platform, merchantId, {
    url: `http://localhost:${receiver.port}/hooks`,
    event_types: ['payout.paid'],
  });
  for (const e of [byIp, byName]) {
    const res = await client.post(`/api/v1/webhook_endpoints/${e.id}/test`, { event_type: 'payout.paid' });
    t.equal(res.status, 201);
  }
  const firstAttempt = async (endpointId: string) =>
    eventually(
      async () => {
        const [d] = (await client.get(`/api/v1/webhook_endpoints/${endpointId}/deliveries`)).body
          .data as LoggedDelivery[];
        return d && d.attempts.length > 0 ? d : undefined;
      },
      10_000,
      'the first attempt',
    );
  const ip = await firstAttempt(byIp.id);
  t.same([ip.attempts[0]!.status_code, ip.attempts[0]!.error], [null, 'refused: 127.0.0.1 is not a public address']);
  const name = await firstAttempt(byName.id);
  t.equal(name.attempts[0]!.status_code, null);
  t.match(name.attempts[0]!.error, /^refused: localhost resolves to .* which is not a public address$/);
  t.equal(
    ip.status,
    'retrying',
    `retried like a network error, in case the address changes back (${JSON.stringify(ip)})`,
  );
  await sleep(300);
  t.equal(receiver.received.length, 0, 'the receiver was never contacted');
});
