import t from 'tap';
import { createAffiliate, createCoupon, setSettings } from '../events/setup.ts';
import { createTestTls, startLockedPlatform } from '../helpers/locked-nats.ts';
import { eventually } from '../helpers/platform.ts';

/**
 * A nats-server that takes TLS connections only, and mutual TLS at that (its `tls` block: certificate, key, CA,
 * verify), with the platform's users: a client that does not trust its CA, or brings no certificate of its own, is
 * refused; the platform, given NATS_TLS_CA, NATS_TLS_CERT and NATS_TLS_KEY, works over it.
 */
const tls = createTestTls(t);
const platform = await startLockedPlatform(t, { tls });
const { nats } = platform;
const gateway = nats.credentials.gateway;

t.test('a client without TLS, or not trusting the CA, or without a certificate, is refused', async (t) => {
  const user = { user: gateway.user, pass: gateway.password };
  // No TLS options: the client upgrades as the server asks, and finds a certificate no public CA signed.
  await t.rejects(nats.connectAs({ ...user, tls: null }), 'no TLS settings');
  await t.rejects(nats.connectAs({ ...user, tls: { certFile: tls.clientCert, keyFile: tls.clientKey } }), 'CA unknown');
  await t.rejects(nats.connectAs({ ...user, tls: { caFile: tls.ca } }), 'no client certificate');
  const nc = await nats.connectAs(user);
  t.ok(nc.info?.tls_required, 'with all three, the connection is TLS');
  await nc.close();
});

t.test('the platform works over TLS, every process on its own user', async (t) => {
  const merchant = await platform.merchant();
  await setSettings(platform.sql, merchant.id, { default_rate: 0.1 });
  const affiliate = await createAffiliate(merchant.client, 'tls@example.com');
  await createCoupon(merchant.client, affiliate.id, 'TLS10');
  const event = await merchant.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'tls-1',
    amount: 50,
    currency: 'USD',
    coupon: 'tls10',
  });
  t.equal(event.status, 201, event.text);
  const amount = await eventually(
    async () =>
      (
        await platform.sql<{ amount: string }[]>`
          select amount::text from commissions where merchant_id = ${merchant.id} and order_id = 'tls-1' and level = 0`
      )[0]?.amount,
    20_000,
    'the commission of the purchase',
  );
  t.equal(Number(amount), 5);
});
