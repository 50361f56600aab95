import t from 'tap';
import { startPayments } from '../payments/setup.ts';
import { billingOwner, GOOD_CARD } from '../helpers/billing.ts';

/**
 * Settings › Plan: the catalogue's plans with prices and limits and the current plan; an upgrade charged to the test
 * card on the platform's own account of the payments service, applied at once (API keys on Growth), with its
 * receipt; a later upgrade within the month charges the difference for the part of the month left, to the saved card.
 */
const { platform } = await startPayments(t);

t.test('the page lists the plans from the catalogue and the current plan', async (t) => {
  const owner = await billingOwner(platform);
  const res = await owner.billing();
  t.equal(res.status, 200);
  t.equal(res.body.plan, 'free');
  t.equal(res.body.payments, 'sandbox', 'outside production the test cards pay');
  t.same(
    res.body.plans.map((p: { id: string; price: { amount: string } | null; api_keys: boolean }) => [
      p.id,
      p.price?.amount ?? null,
      p.api_keys,
    ]),
    [
      ['free', '0.00', false],
      ['starter', '29.00', false],
      ['growth', '99.00', true],
      ['scale', '299.00', true],
      ['enterprise', null, true],
    ],
  );
  t.same(res.body.receipts, []);
  t.equal(res.body.card, null);
});

t.test('upgrading to Growth with the test card charges a month, applies at once and allows API keys', async (t) => {
  const owner = await billingOwner(platform);
  const before = await owner.call('POST', '/dashboard/api/keys', { scopes: ['read'] });
  t.equal(before.status, 402, 'no keys on Free');
  const res = await owner.upgrade({ plan: 'growth', card: GOOD_CARD });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.status, 'succeeded');
  t.equal(res.body.plan, 'growth');
  t.same(res.body.receipt.amount, { amount: '99.00', currency: 'usd' });
  t.equal(res.body.receipt.card, 'visa •••• 4242');
  t.equal(await owner.plan(), 'growth');
  const [intent] = await owner.intents();
  t.match(intent, { id: res.body.receipt.payment_intent, amount: '9900', status: 'succeeded', livemode: false });
  const key = await owner.call('POST', '/dashboard/api/keys', { scopes: ['read'] });
  t.equal(key.status, 201, 'a key, on Growth');
  const page = (await owner.billing()).body;
  t.equal(page.plan, 'growth');
  t.same(page.card, { brand: 'visa', last4: '4242' }, 'the card is saved');
  t.equal(page.receipts.length, 1);
  t.equal(page.receipts[0].id, res.body.receipt.id);
  t.ok(Date.parse(page.period_end) > Date.now() + 27 * 86400_000, 'a month paid for');
});

t.test('an upgrade within the month charges the difference for what is left of it, to the saved card', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  // Half of a 30-day period left: half of Scale's price less Growth's (299 - 99 = 200 dollars).
  const now = Date.now();
  await platform.sql`update billing_accounts set period_start = ${new Date(now - 15 * 86400_000)},
    period_end = ${new Date(now + 15 * 86400_000)} where merchant_id = ${owner.id}`;
  const res = await owner.upgrade({ plan: 'scale' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  const cents = Number(res.body.receipt.amount.amount) * 100;
  t.ok(Math.abs(cents - 10000) <= 1, `half the difference: ${res.body.receipt.amount.amount}`);
  t.equal(res.body.receipt.card, 'visa •••• 4242', 'the saved card');
  t.equal(await owner.plan(), 'scale');
  const page = (await owner.billing()).body;
  t.same(
    page.receipts.map((r: { to_plan: string }) => r.to_plan),
    ['scale', 'growth'],
    'receipts newest first',
  );
  t.equal(Date.parse(page.period_end), now + 15 * 86400_000, 'the period goes on');
});
