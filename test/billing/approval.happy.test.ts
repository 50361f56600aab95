import t from 'tap';
import { runAdmin } from '../helpers/cli.ts';
import { startPlatform } from '../helpers/platform.ts';
import { attachPayments } from '../payments/setup.ts';
import { billingOwner } from '../helpers/billing.ts';

/**
 * Where live payments have no processor (BILLING_PAYMENTS=approval, the default in production), an upgrade is a
 * request: nothing is charged, the plan waits for the operator's `plan approve`, which applies it at once.
 */
const { platform } = await attachPayments(t, await startPlatform(t, { env: { BILLING_PAYMENTS: 'approval' } }));
const admin = (...args: string[]) => runAdmin(platform.databaseUrl, ...args);

t.test('an upgrade is asked of the operator, who approves it', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.billing()).body.payments, 'approval', 'the page is told');
  const asked = await owner.upgrade({ plan: 'growth' });
  t.equal(asked.status, 200, JSON.stringify(asked.body));
  t.same(asked.body, { status: 'requested', plan: 'free', receipt: null });
  t.equal(await owner.plan(), 'free', 'not yet');
  const page = (await owner.billing()).body;
  t.equal(page.requested.plan, 'growth');
  const second = await owner.upgrade({ plan: 'scale' });
  t.equal(second.status, 409, 'one request at a time');
  t.same(await owner.intents(), [], 'nothing charged');

  const approved = await admin('plan', 'approve', owner.id);
  t.equal(approved.code, 0, approved.stderr);
  t.match(approved.json, { merchant_id: owner.id, from: 'free', plan: 'growth' });
  t.equal(await owner.plan(), 'growth');
  t.equal((await owner.billing()).body.requested, null);
  const key = await owner.call('POST', '/dashboard/api/keys', { scopes: ['read'] });
  t.equal(key.status, 201, 'API keys on Growth');
  const again = await admin('plan', 'approve', owner.id);
  t.not(again.code, 0, 'nothing left to approve');
});

t.test('a request that is no upgrade any more (a plan the operator set since) is not applied', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth' })).status, 200);
  const set = await admin('merchant', 'set-plan', owner.id, 'scale');
  t.equal(set.code, 0, set.stderr);
  const approved = await admin('plan', 'approve', owner.id);
  t.not(approved.code, 0);
  t.match(approved.stderr, /no longer an upgrade/);
  t.equal(await owner.plan(), 'scale', 'the plan set is kept');
});
