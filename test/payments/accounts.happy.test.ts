import t from 'tap';
import { livemode, startPayments } from './setup.ts';

t.test('the Stripe SDK creates, retrieves and lists connected accounts', async (t) => {
  const stack = await startPayments(t);
  const merchantId = await stack.merchant();
  const account = await stack.test.accounts.create({
    type: 'express',
    country: 'US',
    email: 'owner@acme.example',
    business_type: 'company',
    metadata: { merchant_id: merchantId, region: 'west' },
  });
  t.match(account.id, /^acct_[0-9a-z]{26}$/);
  t.equal(account.object, 'account');
  t.equal(livemode(account), false);
  t.equal(account.email, 'owner@acme.example');
  t.same(account.metadata, { merchant_id: merchantId, region: 'west' });
  t.equal(account.charges_enabled, false);
  t.equal(account.payouts_enabled, false);
  t.equal(account.details_submitted, false);
  t.same(account.requirements?.currently_due, [
    'business_profile.name',
    'business_profile.product_description',
    'external_account',
    'tos_acceptance.date',
  ]);
  t.equal(account.requirements?.disabled_reason, 'requirements.past_due');
  t.equal(typeof account.created, 'number');

  const fetched = await stack.test.accounts.retrieve(account.id);
  t.same(fetched, account);

  const second = await stack.test.accounts.create({ type: 'express', email: 'b@example.com' });
  const list = await stack.test.accounts.list({ limit: 1 });
  t.equal(list.object, 'list');
  t.equal(list.url, '/v1/accounts');
  t.equal(list.has_more, true);
  t.same(
    list.data.map((a) => a.id),
    [second.id],
  );
  const next = await stack.test.accounts.list({ limit: 1, starting_after: second.id });
  t.same(
    next.data.map((a) => a.id),
    [account.id],
  );
  t.equal(next.has_more, false);
  const back = await stack.test.accounts.list({ limit: 5, ending_before: account.id });
  t.same(
    back.data.map((a) => a.id),
    [second.id],
  );
});
