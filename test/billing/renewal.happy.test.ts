import t from 'tap';
import { GRACE_DAYS, renewDue } from '@platform/gateway/surfaces/dashboard/billing-renewals';
import { startPayments } from '../payments/setup.ts';
import { billingOwner, DECLINED_CARD, GOOD_CARD, renewalTestDeps } from '../helpers/billing.ts';

/**
 * Monthly renewals, as the gateway's job runs them (renewDue, here with a clock of the test's): a month ended is
 * charged once to the saved card however many passes (and replicas) look at it; declined, the merchant is past_due
 * with its owner mailed and keeps the plan; after the grace it is on Free and its keys answer 402; a downgrade asked
 * for applies when the month ends.
 */
const { platform } = await startPayments(t);
const deps = await renewalTestDeps(t, platform);
const DAY = 86_400_000;

const endOf = async (merchantId: string) =>
  (
    await platform.sql<{ period_end: Date | null; status: string }[]>`
      select period_end, status from billing_accounts where merchant_id = ${merchantId}`
  )[0]!;
const mails = (merchantId: string) =>
  platform.sql<{ subject: string }[]>`select subject from mails where merchant_id = ${merchantId} and kind = 'billing'`;

t.test('a month ended is renewed once, to the saved card, however many passes look at it', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const { period_end: end } = await endOf(owner.id);
  const at = new Date(end!.getTime() + 1000);
  await Promise.all([renewDue(deps, at), renewDue(deps, at), renewDue(deps, at)]);
  await renewDue(deps, at);
  const renewals = (await owner.charges()).filter((c) => c.status === 'succeeded');
  t.equal(renewals.length, 2, 'the upgrade and one renewal');
  t.equal((await owner.intents()).length, 2, 'two charges in all');
  const after = await endOf(owner.id);
  t.ok(after.period_end! > end!, 'the next month is paid for');
  t.equal(after.status, 'active');
  t.equal(await owner.plan(), 'growth');
  const page = (await owner.billing()).body;
  t.same(page.receipts[0].amount, { amount: '99.00', currency: 'usd' }, 'the renewal is a receipt');
  t.same([page.receipts[0].kind, page.receipts[1].kind], ['renewal', 'upgrade']);
});

t.test('declined: past_due with a mail, the plan kept; after the grace Free, and keys answer 402', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const key = await owner.call('POST', '/dashboard/api/keys', { scopes: ['read'] });
  t.equal(key.status, 201);
  // The card on file is now one that declines (as a card that has expired or been cancelled would).
  await platform.sql`update billing_accounts set payment_method = 'pm_card_chargeDeclined' where merchant_id = ${owner.id}`;
  const { period_end: end } = await endOf(owner.id);
  await renewDue(deps, new Date(end!.getTime() + 1000));
  t.equal((await endOf(owner.id)).status, 'past_due');
  t.equal(await owner.plan(), 'growth', 'kept during the grace');
  t.match(await mails(owner.id), [{ subject: 'Your payment was declined' }]);
  const page = (await owner.billing()).body;
  t.equal(page.status, 'past_due');
  await renewDue(deps, new Date(end!.getTime() + 2000));
  t.equal((await owner.charges()).filter((c) => c.status === 'declined').length, 1, 'one try a day');
  await renewDue(deps, new Date(end!.getTime() + DAY + 1000));
  t.equal((await owner.charges()).filter((c) => c.status === 'declined').length, 2, 'tried again the next day');
  t.equal((await mails(owner.id)).length, 1, 'mailed once for the decline');

  await renewDue(deps, new Date(end!.getTime() + GRACE_DAYS * DAY + DAY));
  t.equal(await owner.plan(), 'free', 'after the grace: Free');
  t.match(await mails(owner.id), [{ subject: 'Your payment was declined' }, { subject: /now on the Free plan/ }]);
  const res = await fetch(`${platform.baseUrl}/api/v1/affiliates`, {
    headers: { authorization: `Bearer ${key.body.key}` },
  });
  t.equal(res.status, 402, 'the key answers 402');
  t.equal(((await res.json()) as { error: { code: string } }).error.code, 'PLAN_REQUIRED');
  t.equal((await endOf(owner.id)).period_end, null, 'no month running');
});

t.test('a downgrade waits for the end of the month, then the lower plan is charged', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'scale', card: GOOD_CARD })).status, 200);
  const asked = await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'growth' });
  t.equal(asked.status, 200);
  const { period_end: end } = await endOf(owner.id);
  t.same(asked.body, { plan: 'scale', downgrade_to: 'growth', applies_at: end!.toISOString() });
  t.equal(await owner.plan(), 'scale', 'paid for until the month ends');
  t.equal((await owner.billing()).body.downgrade_to, 'growth');
  await renewDue(deps, new Date(end!.getTime() + 1000));
  t.equal(await owner.plan(), 'growth');
  const [latest] = (await owner.billing()).body.receipts;
  t.same([latest.to_plan, latest.amount.amount], ['growth', '99.00'], 'the month on Growth charged');
  t.equal((await owner.billing()).body.downgrade_to, null);
});

t.test('a downgrade to Free ends the billing; refused above the plan; asked again it is cancelled', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const up = await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'scale' });
  t.equal(up.status, 409, 'not a downgrade');
  await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'free' });
  const cancelled = await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'growth' });
  t.equal(cancelled.body.downgrade_to, null, 'the current plan cancels it');
  await owner.call('POST', '/dashboard/api/billing/downgrade', { plan: 'free' });
  const { period_end: end } = await endOf(owner.id);
  await renewDue(deps, new Date(end!.getTime() + 1000));
  t.equal(await owner.plan(), 'free');
  t.equal((await owner.intents()).length, 1, 'nothing charged for Free');
  t.equal((await endOf(owner.id)).period_end, null);
  // Declined card checks leave nothing behind on a merchant without a month running.
  t.equal((await owner.upgrade({ plan: 'growth', card: DECLINED_CARD })).status, 400);
});

t.test('past due: a new card pays the unpaid month at once; a second try that day waits', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  // The month ended a moment ago (the card form tries it on the gateway's own clock).
  const end = new Date(Date.now() - 1000);
  await platform.sql`update billing_accounts set payment_method = 'pm_card_chargeDeclined',
    period_start = ${new Date(end.getTime() - 30 * DAY)}, period_end = ${end} where merchant_id = ${owner.id}`;
  await renewDue(deps, new Date());
  t.equal((await endOf(owner.id)).status, 'past_due');

  const declinedAgain = await owner.call('POST', '/dashboard/api/billing/card', { card: DECLINED_CARD });
  t.equal(declinedAgain.status, 200);
  t.same(declinedAgain.body, { card: { brand: 'visa', last4: '0002' }, status: 'past_due' }, 'tried and declined');
  const good = await owner.call('POST', '/dashboard/api/billing/card', { card: GOOD_CARD });
  t.same(good.body.status, 'past_due', 'once a day this way: the day’s card try is spent');
  await platform.sql`
    delete from billing_charges where merchant_id = ${owner.id} and attempt like 'renewal:%card'`;
  const paid = await owner.call('POST', '/dashboard/api/billing/card', { card: GOOD_CARD });
  t.same(paid.body, { card: { brand: 'visa', last4: '4242' }, status: 'active' }, 'the unpaid month is paid');
  const after = await endOf(owner.id);
  t.equal(after.status, 'active');
  t.ok(after.period_end! > end, 'the next month runs');
  t.equal((await owner.charges()).filter((c) => c.status === 'succeeded').length, 2, 'the upgrade and the month');
  const bad = await owner.call('POST', '/dashboard/api/billing/card', { card: { ...GOOD_CARD, number: '12' } });
  t.equal(bad.status, 400);
});
