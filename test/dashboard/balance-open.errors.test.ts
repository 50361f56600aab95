import t from 'tap';
import { createDashboardUser, sessionRequest, signInHttp } from '../helpers/dashboard.ts';
import { startPayments } from '../payments/setup.ts';

/**
 * A merchant opens its own connected account from the Balance page: one per mode however often or however many at
 * once it is asked (a double click, two admins), bound to the session's merchant only, in test mode outside
 * production; a test platform key still cannot bind an account to a merchant through /v1.
 */
const stack = await startPayments(t);
const { platform } = stack;
const base = platform.baseUrl;

async function owner() {
  const merchant = await platform.merchant({ plan: 'free' });
  const email = `owner-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  return { merchant, session: await signInHttp(base, email) };
}
const accountsOf = (merchantId: string) =>
  platform.sql<{ id: string; livemode: boolean }[]>`
    select id, livemode from payment_accounts where merchant_id = ${merchantId}`;

t.test('asked again, and five times at once, it is one account', async (t) => {
  const o = await owner();
  const first = await sessionRequest(base, o.session, 'POST', '/dashboard/api/balance/account', {});
  t.equal(first.status, 201);
  t.equal(first.body.livemode, false, 'test mode outside production');
  const again = await sessionRequest(base, o.session, 'POST', '/dashboard/api/balance/account', { country: 'GB' });
  t.equal(again.body.id, first.body.id, 'the same account');

  const racing = await owner();
  // Inserts wait behind a lock the test holds, so every request has read "no account yet" before any can write one
  // unless the opening is claimed first: then one writes and the rest wait for it and find its account.
  let release!: () => void;
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const blocker = platform.sql.begin(async (tx) => {
    await tx`lock table payment_accounts in share mode`;
    held();
    await new Promise<void>((resolve) => (release = resolve));
  });
  await holding;
  const asked = Promise.all(
    Array.from({ length: 5 }, () => sessionRequest(base, racing.session, 'POST', '/dashboard/api/balance/account', {})),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  release();
  await blocker;
  const answers = await asked;
  t.same(
    answers.map((a) => a.status),
    [201, 201, 201, 201, 201],
  );
  t.equal(new Set(answers.map((a) => a.body.id)).size, 1, 'every answer names one account');
  t.equal((await accountsOf(racing.merchant.id)).length, 1, 'and one exists');
});

t.test('the account is the session merchant’s, shown on its Balance page only', async (t) => {
  const a = await owner();
  const b = await owner();
  const opened = await sessionRequest(base, a.session, 'POST', '/dashboard/api/balance/account', {});
  const balance = await sessionRequest(base, a.session, 'GET', '/dashboard/api/balance');
  t.equal(balance.body.account.id, opened.body.id);
  t.equal(balance.body.account.details_submitted, false, 'onboarding still to do');
  t.strictSame((await sessionRequest(base, b.session, 'GET', '/dashboard/api/balance')).body.account, null);
  const link = await sessionRequest(base, a.session, 'POST', '/dashboard/api/balance/account_link');
  t.equal(link.status, 201, 'the hosted onboarding link follows');
});

t.test('bad input is 400; a test key still cannot bind through /v1', async (t) => {
  const o = await owner();
  const bad = await sessionRequest(base, o.session, 'POST', '/dashboard/api/balance/account', { country: 'usa' });
  t.equal(bad.status, 400);
  t.match(bad.body.error.details, [{ path: 'country' }]);
  const viaKey = await stack.test.accounts.create({
    type: 'express',
    metadata: { merchant_id: o.merchant.id },
  });
  const [row] = await platform.sql<{ merchant_id: string | null }[]>`
    select merchant_id from payment_accounts where id = ${viaKey.id}`;
  t.equal(row!.merchant_id, null, 'metadata[merchant_id] from a test key binds nothing');
  t.same(await accountsOf(o.merchant.id), []);
});
