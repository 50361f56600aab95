import t from 'tap';
import { createDashboardUser, sessionRequest, signInHttp } from '../helpers/dashboard.ts';
import { startPayments } from '../payments/setup.ts';
import { billingOwner, GOOD_CARD } from '../helpers/billing.ts';

/**
 * Billing is an owner's and an admin's: other roles and no session are refused before the body is read; a change
 * needs the CSRF token; the card number is stored nowhere and logged nowhere (its last four digits only); an
 * attempt key is the merchant's own, so another merchant's cannot replay its receipt.
 */
const stack = await startPayments(t);
const { platform } = stack;
const base = platform.baseUrl;

t.test('no session is 401; developer and viewer are 403; without the CSRF token 403', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await sessionRequest(base, {}, 'GET', '/dashboard/api/billing')).status, 401);
  for (const role of ['developer', 'viewer']) {
    const email = `${role}-${owner.id}@example.com`;
    await createDashboardUser(platform.sql, owner.id, email);
    await platform.sql`update dashboard_users set role = ${role} where email = ${email}`;
    const session = await signInHttp(base, email);
    const read = await sessionRequest(base, session, 'GET', '/dashboard/api/billing');
    t.equal(read.status, 403, `${role} reads no billing`);
    t.equal(read.body.error.code, 'FORBIDDEN');
    const up = await sessionRequest(base, session, 'POST', '/dashboard/api/billing/upgrade', {
      plan: 'growth',
      attempt: 'attempt-of-a-developer',
      card: GOOD_CARD,
    });
    t.equal(up.status, 403, `${role} upgrades nothing`);
  }
  const noCsrf = await sessionRequest(
    base,
    owner.session,
    'POST',
    '/dashboard/api/billing/upgrade',
    { plan: 'growth', attempt: 'attempt-without-csrf', card: GOOD_CARD },
    { csrf: false },
  );
  t.equal(noCsrf.status, 403);
  t.same([await owner.plan(), await owner.charges()], ['free', []]);
});

t.test('the card number is kept and logged nowhere', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const rows = await platform.sql`
    select (select json_agg(b) from billing_accounts b where merchant_id = ${owner.id})::text as accounts,
           (select json_agg(c) from billing_charges c where merchant_id = ${owner.id})::text as charges,
           (select json_agg(p) from payment_intents p where metadata ->> 'merchant_id' = ${owner.id})::text as intents`;
  const stored = JSON.stringify(rows);
  t.notMatch(stored, /4242424242424242|4242 4242 4242 4242/, 'not in the tables');
  t.match(stored, /4242/, 'the last four digits are');
  const logged = [...platform.logs, ...stack.logs].join('\n');
  t.notMatch(logged, /4242 ?4242 ?4242/, 'not in the logs');
});

t.test('an attempt key is the merchant’s own', async (t) => {
  const a = await billingOwner(platform);
  const b = await billingOwner(platform);
  const attempt = 'shared-attempt-key';
  const paid = await a.upgrade({ plan: 'growth', attempt, card: GOOD_CARD });
  const other = await b.upgrade({ plan: 'starter', attempt, card: GOOD_CARD });
  t.equal(other.status, 200);
  t.not(other.body.receipt.id, paid.body.receipt.id, 'its own charge, not a replay of another merchant’s');
  t.equal(other.body.plan, 'starter');
  t.same([await a.plan(), await b.plan()], ['growth', 'starter']);
  const page = (await b.billing()).body;
  t.same(
    page.receipts.map((r: { to_plan: string }) => r.to_plan),
    ['starter'],
    'its receipts only',
  );
});
