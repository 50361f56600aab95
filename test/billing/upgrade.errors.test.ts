import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startPayments } from '../payments/setup.ts';
import { billingOwner, DECLINED_CARD, GOOD_CARD } from '../helpers/billing.ts';

/**
 * Upgrades that must not charge, or must charge once: a declined card leaves the plan as it was (and the same
 * attempt again is the same refusal), a double submit of one attempt is one charge, two upgrades racing make one,
 * and what is not an upgrade (a lower plan, Enterprise, a card the sandbox does not have) is refused before any.
 */
const { platform } = await startPayments(t);

t.test('a declined card: 400 on the card number, the plan unchanged, nothing saved', async (t) => {
  const owner = await billingOwner(platform);
  const attempt = randomUUID();
  const res = await owner.upgrade({ plan: 'growth', attempt, card: DECLINED_CARD });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'INVALID_INPUT');
  t.match(res.body.error.details, [{ path: 'card.number', message: /declined/ }]);
  t.equal(await owner.plan(), 'free');
  const again = await owner.upgrade({ plan: 'growth', attempt, card: DECLINED_CARD });
  const { request_id: _first, ...refusal } = res.body.error;
  t.match(again.body.error, refusal, 'the same attempt: the same refusal');
  t.equal((await owner.intents()).length, 1, 'and no second charge asked');
  const page = (await owner.billing()).body;
  t.same([page.card, page.receipts], [null, []], 'no card saved, no receipt');
  const paid = await owner.upgrade({ plan: 'growth', card: GOOD_CARD });
  t.equal(paid.status, 200, 'another attempt with a good card pays');
  t.same((await owner.charges()).map((c) => c.status).sort(), ['declined', 'succeeded']);
});

t.test('the same attempt sent twice at once, and again after: one charge, one receipt', async (t) => {
  const owner = await billingOwner(platform);
  const attempt = randomUUID();
  const both = await Promise.all([
    owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD }),
    owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD }),
  ]);
  const statuses = both.map((r) => r.status).sort();
  t.ok(statuses[0] === 200 && [200, 409].includes(statuses[1]!), `answers ${statuses.join(', ')}`);
  const later = await owner.upgrade({ plan: 'growth', attempt, card: GOOD_CARD });
  t.equal(later.status, 200, 'replayed');
  const first = both.find((r) => r.status === 200)!;
  t.equal(later.body.receipt.id, first.body.receipt.id, 'the first outcome');
  t.equal((await owner.intents()).length, 1, 'one payment intent');
  t.equal((await owner.charges()).length, 1, 'one claim');
});

t.test('two upgrades to Growth racing (two tabs): one is charged, the other refused with 409', async (t) => {
  const owner = await billingOwner(platform);
  const answers = await Promise.all([
    owner.upgrade({ plan: 'growth', card: GOOD_CARD }),
    owner.upgrade({ plan: 'growth', card: GOOD_CARD }),
  ]);
  t.same(answers.map((a) => a.status).sort(), [200, 409]);
  // Refused while the first is in flight, or, once it has finished, as no longer an upgrade.
  const refused = answers.find((a) => a.status === 409)!;
  t.equal(refused.body.error.code, 'CONFLICT');
  const paid = answers.find((a) => a.status === 200)!;
  t.equal(await owner.plan(), paid.body.plan);
  t.same(
    (await owner.intents()).map((i) => i.status),
    ['succeeded'],
    'one charge',
  );
});

t.test('what is not a self-serve upgrade is refused before any charge', async (t) => {
  const owner = await billingOwner(platform, 'growth');
  const lower = await owner.upgrade({ plan: 'starter', card: GOOD_CARD });
  t.equal(lower.status, 409, 'a lower plan');
  const same = await owner.upgrade({ plan: 'growth', card: GOOD_CARD });
  t.equal(same.status, 409, 'the same plan');
  const enterprise = await owner.upgrade({ plan: 'enterprise', card: GOOD_CARD });
  t.equal(enterprise.status, 409);
  t.match(enterprise.body.error.message, /contact us/);
  const unknown = await owner.upgrade({ plan: 'scale', card: { ...GOOD_CARD, number: '4111 1111 1111 1111' } });
  t.equal(unknown.status, 400);
  t.match(unknown.body.error.details, [{ path: 'card.number', message: /4242/ }]);
  const expired = await owner.upgrade({ plan: 'scale', card: { ...GOOD_CARD, expiry: '01/20' } });
  t.match(expired.body.error.details, [{ path: 'card.expiry' }]);
  const noCard = await owner.upgrade({ plan: 'scale' });
  t.match(noCard.body.error.details, [{ path: 'card.number', message: 'Enter a card to pay with' }]);
  const malformed = await owner.upgrade({ plan: 'gold', card: GOOD_CARD });
  t.equal(malformed.status, 400);
  t.same([await owner.intents(), await owner.charges(), await owner.plan()], [[], [], 'growth']);
});
