import t from 'tap';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { createAffiliate, createCoupon, setSettings } from '../events/setup.ts';
import { startLockedPlatform } from '../helpers/locked-nats.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';

/**
 * The whole platform on a nats-server that admits only the platform's users, every process on its own
 * (NATS_USER, NATS_PASSWORD): an affiliate created through the API reaches the merchant's webhook, a purchase by its
 * coupon becomes a commission and its webhook, and each service-to-service request reaches the service it names.
 */
const platform = await startLockedPlatform(t);

t.test('the API, the outbox, the consumers and the webhooks work with a user per process', async (t) => {
  const merchant = await platform.merchant();
  await setSettings(platform.sql, merchant.id, { default_rate: 0.1 });
  const receiver = await startReceiver(t);
  const endpoint = await merchant.client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['affiliate.created', 'commission.created'],
  });
  t.equal(endpoint.status, 201, endpoint.text);
  const affiliate = await createAffiliate(merchant.client, 'locked@example.com');
  await createCoupon(merchant.client, affiliate.id, 'LOCKED10');
  const event = await merchant.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'locked-1',
    amount: 100,
    currency: 'USD',
    coupon: 'locked10',
  });
  t.equal(event.status, 201, event.text);
  const types = await eventually(
    async () => {
      const seen = new Set(receiver.received.map((r) => r.type));
      return seen.has('affiliate.created') && seen.has('commission.created') ? seen : undefined;
    },
    20_000,
    'the affiliate.created and commission.created webhooks',
  );
  t.ok(types.has('affiliate.created') && types.has('commission.created'));
  const [commission] = await platform.sql<{ amount: string }[]>`
    select amount::text from commissions where merchant_id = ${merchant.id} and order_id = 'locked-1' and level = 0`;
  t.equal(Number(commission?.amount), 10);
  const violations = Object.entries(platform.logs).flatMap(([service, lines]) =>
    lines.filter((l) => /permission/i.test(l)).map((l) => `${service}: ${l}`),
  );
  t.same(violations, [], 'no process logged a permissions violation');
});

t.test('commissions calls payments, and payments reports back to commissions, as their own users', async (t) => {
  const commissions = await platform.nats.connectAsClient('commissions');
  const pay = await commissions.request(PLATFORM_PAYOUT_SUBJECTS.pay(platform.nats.prefix), '{}', { timeout: 5000 });
  t.ok(pay.headers?.get(RPC_OUTCOME_HEADER), 'payments answered the payout request (a refusal of its body)');
  const payments = await platform.nats.connectAsClient('payments');
  const settled = await payments.request(PLATFORM_PAYOUT_SUBJECTS.settled(platform.nats.prefix), '{}', {
    timeout: 5000,
  });
  t.ok(settled.headers?.get(RPC_OUTCOME_HEADER), 'commissions answered the settlement report');
});
