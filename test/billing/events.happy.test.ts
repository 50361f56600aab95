import t from 'tap';
import { deliverBillingEvents } from '@platform/gateway/surfaces/dashboard/billing-events';
import { generateWebhookSecret } from '@platform/shared/webhooks';
import { runAdmin } from '../helpers/cli.ts';
import { captureLogger, startPlatform } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook } from '../helpers/receiver.ts';
import { attachPayments } from '../payments/setup.ts';
import { billingOwner, GOOD_CARD } from '../helpers/billing.ts';

/**
 * Billing events reach the platform operator's endpoint, signed (Standard Webhooks) with its secret: an upgrade, a
 * downgrade asked for, an approval by the operator. A refused delivery is tried again later and the event is
 * delivered once; the configuration refuses an endpoint without a secret.
 */
const secret = generateWebhookSecret();
let failFirst = true;
const receiver = await startReceiver(t, (_hook, _n, res) => {
  res.statusCode = failFirst ? 503 : 200;
  failFirst = false;
  res.end();
});
const { platform } = await attachPayments(t, await startPlatform(t));
const target = { url: receiver.url, secret };
const log = captureLogger('billing-events').log;

t.test('an upgrade and a downgrade are sent, signed; refused once, then delivered once', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  t.equal((await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'starter' })).status, 200);
  t.equal(await deliverBillingEvents(platform.sql, target, log), 0, 'the endpoint refused the first');
  const retryAt = new Date(Date.now() + 3_600_000);
  t.equal(await deliverBillingEvents(platform.sql, target, log, retryAt), 1, 'tried again later: delivered');
  t.equal(await deliverBillingEvents(platform.sql, target, log, retryAt), 0, 'nothing is sent twice');
  const hooks = receiver.received.filter((h) => h.body.includes(owner.id));
  t.same(
    hooks.map((h) => h.type),
    ['plan.upgraded', 'plan.upgraded'],
    'the upgrade, refused then delivered',
  );
  const payload = verifyWebhook(secret, hooks[1]!) as { id: string; data: Record<string, unknown> };
  t.equal(hooks[1]!.id, payload.id, 'webhook-id is the event id');
  t.match(payload.data, { from_plan: 'free', to_plan: 'growth', amount: 9900, currency: 'usd' });
  t.equal(hooks[0]!.id, hooks[1]!.id, 'the retry is the same event');
});

t.test('the operator’s approval and an immediate downgrade are events too', async (t) => {
  const owner = await billingOwner(platform, 'starter');
  await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'free' });
  await platform.sql`insert into billing_charges (merchant_id, id, attempt, from_plan, to_plan, amount, currency, status)
    values (${owner.id}, 'bch_test', 'asked-by-hand', 'free', 'growth', 9900, 'usd', 'requested')`;
  t.equal((await runAdmin(platform.databaseUrl, 'plan', 'approve', owner.id)).code, 0);
  await deliverBillingEvents(platform.sql, target, log, new Date(Date.now() + 7_200_000));
  const types = receiver.received.filter((h) => h.body.includes(owner.id)).map((h) => h.type);
  t.same(types, ['plan.downgraded', 'plan.upgrade_approved']);
});

t.test('an endpoint without a secret does not start', async (t) => {
  const { loadGatewayConfig } = await import('@platform/gateway/config');
  t.throws(() => loadGatewayConfig({ ...platform.env, BILLING_WEBHOOK_URL: receiver.url }), /BILLING_WEBHOOK_SECRET/);
});
