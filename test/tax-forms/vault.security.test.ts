import { randomBytes } from 'node:crypto';
import t from 'tap';
import { UndecryptableSecret } from '@platform/shared/crypto';
import { hasValidTaxForm, readPayoutDetails } from '@platform/shared/payee';
import { vaultKeyId } from '@platform/shared/vault';
import { createAffiliate } from '../events/setup.ts';
import { runAdminWithEnv } from '../helpers/cli.ts';
import { startPlatform } from '../helpers/platform.ts';
import { putPayoutDetails, taxFormsPath, w8ben } from './setup.ts';

// The vault across a key rotation, read the way the payouts read it (shared/src/payee.ts): each row names its key,
// an earlier key in ENCRYPTION_KEYS_PREVIOUS still opens it, and `admin secrets re-encrypt` moves it to the new key.
t.setTimeout(120_000);
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const platform = await startPlatform(t, { env: { ENCRYPTION_KEY: OLD.toString('base64') } });
const { id: merchantId, client } = await platform.merchant();
const affiliate = await createAffiliate(client, 'rotate@example.com');

t.test('the payees read: a valid form, and the payout details in clear', async (t) => {
  t.equal(await hasValidTaxForm(platform.sql, merchantId, affiliate.id), false, 'no form yet');
  t.equal(await readPayoutDetails(platform.sql, [OLD], merchantId, affiliate.id), null, 'no details yet');
  t.equal((await client.post(taxFormsPath(affiliate.id), w8ben({ signed_on: '2021-05-01' }))).status, 201);
  t.equal(await hasValidTaxForm(platform.sql, merchantId, affiliate.id), false, 'an expired form is not valid');
  t.equal((await client.post(taxFormsPath(affiliate.id), w8ben())).status, 201);
  t.equal(await hasValidTaxForm(platform.sql, merchantId, affiliate.id), true);
  const other = await platform.merchant();
  t.equal(await hasValidTaxForm(platform.sql, other.id, affiliate.id), false, 'scoped to the merchant');

  const put = await putPayoutDetails(client, affiliate.id, { method: 'paypal', paypal_email: 'Rotate@Example.com' });
  t.equal(put.status, 200);
  t.same(await readPayoutDetails(platform.sql, [OLD], merchantId, affiliate.id), {
    method: 'paypal',
    paypal_email: 'Rotate@Example.com',
  });
  t.equal(await readPayoutDetails(platform.sql, [OLD], other.id, affiliate.id), null, 'scoped to the merchant');
});

t.test(
  'after a key change: the old key in ENCRYPTION_KEYS_PREVIOUS opens the rows until re-encrypt moves them',
  async (t) => {
    const vaultRows = () =>
      platform.sql<{ key_id: string }[]>`select key_id from vault_secrets where affiliate_id = ${affiliate.id}`;
    t.same(
      (await vaultRows()).map((r) => r.key_id),
      [vaultKeyId(OLD), vaultKeyId(OLD), vaultKeyId(OLD)],
      'two foreign TINs and the payout details',
    );
    await t.rejects(readPayoutDetails(platform.sql, [NEW], merchantId, affiliate.id), UndecryptableSecret);
    t.match(await readPayoutDetails(platform.sql, [NEW, OLD], merchantId, affiliate.id), { method: 'paypal' });

    const env = {
      DATABASE_URL: platform.databaseUrl,
      ENCRYPTION_KEY: NEW.toString('base64'),
      ENCRYPTION_KEYS_PREVIOUS: OLD.toString('base64'),
    };
    const run = await runAdminWithEnv(env, 'secrets', 're-encrypt');
    t.equal(run.code, 0, run.stderr);
    t.same(run.json.columns[2], {
      column: 'vault_secrets.ciphertext',
      re_encrypted: 3,
      already_current: 0,
      undecryptable: [],
      changing: [],
    });
    t.notMatch(run.stdout, 'Rotate@Example.com');
    t.same(
      (await vaultRows()).map((r) => r.key_id),
      [vaultKeyId(NEW), vaultKeyId(NEW), vaultKeyId(NEW)],
    );
    t.same(await readPayoutDetails(platform.sql, [NEW], merchantId, affiliate.id), {
      method: 'paypal',
      paypal_email: 'Rotate@Example.com',
    });
    const again = await runAdminWithEnv(env, 'secrets', 're-encrypt');
    t.match(again.json.columns[2], { re_encrypted: 0, already_current: 3 }, 'a second run has nothing to do');
  },
);
