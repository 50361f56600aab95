import { randomUUID } from 'node:crypto';
import t from 'tap';
import { renewDue, type RenewalDeps } from '@platform/gateway/surfaces/dashboard/billing-renewals';
import { billingOwner, GOOD_CARD, renewalTestDeps } from '../helpers/billing.ts';
import { startPayments } from '../payments/setup.ts';

/**
 * Billing when what was read is no longer so: a renewal pass that read an account before its merchant upgraded does
 * not charge the month the upgrade replaced; a claim abandoned by its maker is finished by the next attempt or the
 * job instead of blocking the account; an upgrade cancels a downgrade scheduled before it; a claim finished after its
 * month ended buys the period it was priced for; a downgrade asked for while past due applies at once.
 */
const { platform } = await startPayments(t);
const deps = await renewalTestDeps(t, platform);
const DAY = 86_400_000;
const periodOf = async (merchantId: string) =>
  (
    await platform.sql<{ period_start: Date | null; period_end: Date | null; status: string }[]>`
      select period_start, period_end, status from billing_accounts where merchant_id = ${merchantId}`
  )[0]!;

/** A claim left by a maker that stopped before asking for the payment intent, its lease run out. */
async function abandonedClaim(merchantId: string, over: { to?: string; amount?: number; period?: [Date, Date] } = {}) {
  const attempt = randomUUID();
  await platform.sql`
    insert into billing_charges (merchant_id, id, attempt, from_plan, to_plan, amount, currency, status,
      payment_method, card_brand, card_last4, period_start, period_end, leased_until)
    values (${merchantId}, ${'bch_' + randomUUID().replace(/-/g, '').slice(0, 26)}, ${attempt}, 'free',
      ${over.to ?? 'growth'}, ${over.amount ?? 9900}, 'usd', 'claimed', 'pm_card_visa', 'visa', '4242',
      ${over.period?.[0] ?? null}, ${over.period?.[1] ?? null}, now() - interval '1 second')`;
  return attempt;
}

t.test('a pass that read an account before its upgrade does not charge the replaced month', async (t) => {
  const first = await billingOwner(platform);
  const second = await billingOwner(platform);
  t.equal((await first.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  t.equal((await second.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const { period_end: end } = await periodOf(second.id);
  // While the pass charges the first merchant, the second (read already, further down the list) upgrades.
  let upgraded = false;
  const racing: RenewalDeps = {
    ...deps,
    ask: async (operation, path, params) => {
      if (!upgraded && operation === 'create_payment_intent') {
        upgraded = true;
        t.equal((await second.upgrade({ plan: 'scale', card: GOOD_CARD })).status, 200, 'upgraded mid-pass');
      }
      return deps.ask(operation, path, params);
    },
  };
  await renewDue(racing, new Date(end!.getTime() + 1000));
  t.ok(upgraded);
  t.same(
    (await second.intents()).map((i) => i.amount).sort(),
    [(await second.charges()).find((c) => c.amount !== '9900')!.amount, '9900'].sort(),
    'the second merchant paid the Growth month and the upgrade, and no renewal of the month it replaced',
  );
  t.equal(await second.plan(), 'scale');
  t.equal((await first.intents()).length, 2, 'the first merchant was renewed');
});

t.test('an abandoned upgrade is finished by the next attempt, charged once', async (t) => {
  const owner = await billingOwner(platform);
  await abandonedClaim(owner.id);
  const res = await owner.upgrade({ plan: 'growth', card: GOOD_CARD });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(await owner.plan(), 'growth');
  t.equal((await owner.intents()).length, 1, 'one charge: the abandoned claim’s');

  const other = await billingOwner(platform);
  await abandonedClaim(other.id, { to: 'starter', amount: 2900 });
  const res2 = await other.upgrade({ plan: 'growth', card: GOOD_CARD });
  t.equal(res2.status, 200, 'another plan: the abandoned one finished, then this one made');
  t.equal(await other.plan(), 'growth');
  const paid = (await other.charges()).filter((c) => c.status === 'succeeded').map((c) => c.amount);
  t.equal(paid.length, 2);
  t.same((await other.intents()).map((i) => i.amount).sort(), paid.sort(), 'each charged once');
});

t.test('the renewal job finishes an abandoned upgrade instead of waiting on it', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const { period_end: end } = await periodOf(owner.id);
  await platform.sql`update billing_accounts set period_start = ${new Date(Date.now() - 31 * DAY)},
    period_end = ${new Date(Date.now() - 1000)} where merchant_id = ${owner.id}`;
  await abandonedClaim(owner.id, { to: 'scale', amount: 100 });
  await renewDue(deps, new Date(Math.max(Date.now(), end!.getTime()) + 1000));
  t.equal(await owner.plan(), 'scale', 'the abandoned upgrade was finished');
  t.same(
    (await owner.charges()).map((c) => c.status),
    ['succeeded', 'succeeded'],
    'and nothing is left in flight',
  );
});

t.test('an upgrade cancels a downgrade scheduled before it', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  t.equal((await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'starter' })).status, 200);
  t.equal((await owner.upgrade({ plan: 'scale', card: GOOD_CARD })).status, 200);
  t.equal((await owner.billing()).body.downgrade_to, null);
  const { period_end: end } = await periodOf(owner.id);
  await renewDue(deps, new Date(end!.getTime() + 1000));
  t.equal(await owner.plan(), 'scale', 'still on what was paid for last');
});

t.test('a claim finished after its month ended buys the period it was priced for', async (t) => {
  const owner = await billingOwner(platform, 'starter');
  const start = new Date(Date.now() - 40 * DAY);
  const end = new Date(Date.now() - 10 * DAY);
  const attempt = await abandonedClaim(owner.id, { amount: 7, period: [start, end] });
  const res = await owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD });
  t.equal(res.status, 200, JSON.stringify(res.body));
  const period = await periodOf(owner.id);
  t.same([period.period_start, period.period_end], [start, end], 'the priced period, not a new month');
});

t.test('a downgrade asked for while past due applies at once', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'scale', card: GOOD_CARD })).status, 200);
  await platform.sql`update billing_accounts set payment_method = 'pm_card_chargeDeclined' where merchant_id = ${owner.id}`;
  const { period_end: end } = await periodOf(owner.id);
  await renewDue(deps, new Date(end!.getTime() + 1000));
  t.equal((await periodOf(owner.id)).status, 'past_due');
  const asked = await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'free' });
  t.equal(asked.status, 200);
  t.same(asked.body, { plan: 'free', downgrade_to: null, applies_at: null });
  t.equal(await owner.plan(), 'free');
  await platform.sql`update billing_accounts set payment_method = 'pm_card_visa' where merchant_id = ${owner.id}`;
  const before = (await owner.intents()).length;
  await renewDue(deps, new Date(end!.getTime() + DAY + 1000));
  t.equal((await owner.intents()).length, before, 'nothing charged for the plan given up');
  t.equal((await periodOf(owner.id)).period_end, null, 'no month running');
});
