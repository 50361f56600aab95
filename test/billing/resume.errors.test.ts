import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startPayments } from '../payments/setup.ts';
import { billingOwner, GOOD_CARD } from '../helpers/billing.ts';

/**
 * A gateway that stopped mid-upgrade leaves its claim: the same attempt, once the claim's lease has run out, resumes
 * it and never charges twice. Stopped before the payment intent was made: it is made and confirmed. Stopped after
 * the card was charged but before the plan was written: the charge is found and the plan applied, nothing charged
 * again. Within the lease the retry is told to wait (409).
 */
const stack = await startPayments(t);
const { platform } = stack;

async function leftClaim(merchantId: string, attempt: string, intent: string | null, leasedFor = -1000) {
  await platform.sql`
    insert into billing_charges (merchant_id, id, attempt, from_plan, to_plan, amount, currency, status,
      payment_method, card_brand, card_last4, payment_intent, leased_until)
    values (${merchantId}, ${'bch_' + randomUUID().replace(/-/g, '').slice(0, 26)}, ${attempt}, 'free', 'growth',
      9900, 'usd', 'claimed', 'pm_card_visa', 'visa', '4242', ${intent},
      now() + ${leasedFor} * interval '1 millisecond')`;
}

t.test('stopped before the intent: the retry makes it and charges once', async (t) => {
  const owner = await billingOwner(platform);
  const attempt = randomUUID();
  await leftClaim(owner.id, attempt, null);
  const res = await owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(await owner.plan(), 'growth');
  t.equal((await owner.intents()).length, 1);
});

t.test('stopped after the charge: the retry finds it, applies the plan and charges nothing more', async (t) => {
  const owner = await billingOwner(platform);
  const attempt = randomUUID();
  const paid = await stack.test.paymentIntents.create({
    amount: 9900,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
    metadata: { merchant_id: owner.id },
  });
  t.equal(paid.status, 'succeeded');
  await leftClaim(owner.id, attempt, paid.id);
  const res = await owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.receipt.payment_intent, paid.id, 'the charge made before the stop');
  t.equal(await owner.plan(), 'growth');
  t.equal((await owner.intents()).length, 1, 'no second charge');
});

t.test('within the lease the same attempt waits: 409, nothing charged', async (t) => {
  const owner = await billingOwner(platform);
  const attempt = randomUUID();
  await leftClaim(owner.id, attempt, null, 60_000);
  const res = await owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD });
  t.equal(res.status, 409);
  t.equal(res.body.error.code, 'CONFLICT');
  const other = await owner.upgrade({ plan: 'growth', card: GOOD_CARD });
  t.equal(other.status, 409, 'and another attempt too');
  t.same([await owner.intents(), await owner.plan()], [[], 'free']);
});
