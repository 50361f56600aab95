import t from 'tap';
import { newId } from '@platform/shared/ids';
import { runAdmin } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/platform.ts';

t.test('admin platform-key create, list, revoke: the value printed once, only its hash kept, audited', async (t) => {
  const db = await createTestDatabase(t);
  const created = await runAdmin(db.url, 'platform-key', 'create', '--mode', 'test');
  t.equal(created.code, 0, created.stderr);
  t.match(created.json, {
    id: /^pkey_[0-9a-z]{26}$/,
    key: /^sk_test_[A-Za-z0-9_-]{43}$/,
    livemode: false,
    rate_limit_per_min: 600,
  });
  const live = await runAdmin(db.url, 'platform-key', 'create', '--mode', 'live', '--rate-limit', '1200');
  t.match(live.json, { key: /^sk_live_/, livemode: true, rate_limit_per_min: 1200 });

  const listed = await runAdmin(db.url, 'platform-key', 'list');
  t.equal(listed.code, 0);
  t.same(
    (listed.json as { id: string }[]).map((k) => k.id),
    [live.json.id, created.json.id],
  );
  t.notMatch(listed.stdout, created.json.key, 'the value is never shown again');
  t.notMatch(listed.stdout, 'key_hash');

  const revoked = await runAdmin(db.url, 'platform-key', 'revoke', created.json.id);
  t.equal(revoked.code, 0);
  t.ok(revoked.json.revoked_at);
  const again = await runAdmin(db.url, 'platform-key', 'revoke', created.json.id);
  t.equal(again.code, 0, 'revoking again changes nothing');
  const audit =
    await db.sql`select action, actor from platform_key_audit where key_id = ${created.json.id} order by id`;
  t.same(
    audit.map((r) => [r['action'], r['actor']]),
    [
      ['created', 'operator'],
      ['revoked', 'operator'],
    ],
  );

  const badMode = await runAdmin(db.url, 'platform-key', 'create', '--mode', 'staging');
  t.equal(badMode.code, 2);
  t.equal(badMode.stderr, 'admin: --mode must be test or live\n');
  const unknown = await runAdmin(db.url, 'platform-key', 'revoke', 'pkey_nope');
  t.equal(unknown.code, 2);
  t.equal(unknown.stderr, 'admin: no platform key pkey_nope\n');
});

t.test(
  'admin platform-account bind: the operator binds a connected account of either mode to a merchant',
  async (t) => {
    const db = await createTestDatabase(t);
    const merchant = await runAdmin(db.url, 'merchant', 'create', '--name', 'Acme', '--plan', 'growth');
    const merchantId = merchant.json.id as string;
    const [first, second] = [newId('acct'), newId('acct')];
    await db.sql`
    insert into payment_accounts (id, livemode, type, country, default_currency)
    values (${first}, false, 'express', 'US', 'usd')`;
    const bound = await runAdmin(db.url, 'platform-account', 'bind', first, merchantId);
    t.equal(bound.code, 0, bound.stderr);
    t.same(bound.json, { id: first, livemode: false, merchant_id: merchantId });

    const noAccount = await runAdmin(db.url, 'platform-account', 'bind', second, merchantId);
    t.equal(noAccount.code, 2);
    t.equal(noAccount.stderr, `admin: no connected account ${second}\n`);
    const noMerchant = await runAdmin(db.url, 'platform-account', 'bind', first, 'mer_x');
    t.equal(noMerchant.code, 2);
    t.equal(noMerchant.stderr, 'admin: give a connected account id (acct_…) and a merchant id (mer_…)\n');
  },
);
