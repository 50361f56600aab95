import { randomBytes } from 'node:crypto';
import t from 'tap';
import { decryptSecretWithAny, secretPlace, UndecryptableSecret } from '@platform/shared/crypto';
import { readPayoutDetails } from '@platform/shared/payee';
import { startPlatform } from '../helpers/platform.ts';
import { registerEndpoint } from '../helpers/webhooks.ts';
import { createAffiliate } from '../events/setup.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

// Someone who can write to the database but holds no key (a leaked backup restored, an SQL injection, an operator's
// slip) moves ciphertexts between rows: each value is bound to its row and merchant, so a moved one does not open.
t.setTimeout(120_000);
const KEY = randomBytes(32);
const keys = [KEY];
const platform = await startPlatform(t, { env: { ENCRYPTION_KEY: KEY.toString('base64') } });
const acme = await platform.merchant();
const globex = await platform.merchant();
const [alice, bob] = [
  await createAffiliate(acme.client, 'alice@example.com'),
  await createAffiliate(acme.client, 'bob@example.com'),
];
const carol = await createAffiliate(globex.client, 'carol@example.com');

const vaultRowOf = async (merchantId: string, affiliateId: string) => {
  const [row] = await platform.sql<{ id: string; key_id: string; ciphertext: string }[]>`
    select v.id, v.key_id, v.ciphertext from affiliates a join vault_secrets v on v.id = a.payout_details_vault_id
    where a.merchant_id = ${merchantId} and a.id = ${affiliateId} and v.merchant_id = ${merchantId}`;
  return row!;
};

t.test('a vault blob copied into another row does not decrypt, within a merchant or across', async (t) => {
  for (const [client, affiliate, email] of [
    [acme.client, alice, 'alice@pay.example'],
    [acme.client, bob, 'bob@pay.example'],
    [globex.client, carol, 'carol@pay.example'],
  ] as const)
    t.equal((await putPayoutDetails(client, affiliate.id, { method: 'paypal', paypal_email: email })).status, 200);
  const aliceRow = await vaultRowOf(acme.id, alice.id);

  for (const [merchantId, affiliate, what] of [
    [acme.id, bob, "another affiliate's row of the same merchant"],
    [globex.id, carol, "another merchant's row"],
  ] as const) {
    const target = await vaultRowOf(merchantId, affiliate.id);
    // The blob and its key id both, as a copy of the whole row's secret would be.
    await platform.sql`
      update vault_secrets set ciphertext = ${aliceRow.ciphertext}, key_id = ${aliceRow.key_id}
      where merchant_id = ${merchantId} and id = ${target.id}`;
    await t.rejects(readPayoutDetails(platform.sql, keys, merchantId, affiliate.id), UndecryptableSecret, what);
    await platform.sql`
      update vault_secrets set ciphertext = ${target.ciphertext} where merchant_id = ${merchantId} and id = ${target.id}`;
    t.match(await readPayoutDetails(platform.sql, keys, merchantId, affiliate.id), { method: 'paypal' }, 'put back');
  }
  t.same(await readPayoutDetails(platform.sql, keys, acme.id, alice.id), {
    method: 'paypal',
    paypal_email: 'alice@pay.example',
  });
});

t.test("a webhook secret copied to another endpoint does not open as that endpoint's", async (t) => {
  const first = await registerEndpoint(platform, acme.id, { url: 'http://127.0.0.1:9/first' });
  const second = await registerEndpoint(platform, acme.id, { url: 'http://127.0.0.1:9/second' });
  await platform.sql`
    update webhook_endpoints set secret_encrypted = (select secret_encrypted from webhook_endpoints where id = ${first.id})
    where merchant_id = ${acme.id} and id = ${second.id}`;
  const [row] = await platform.sql<{ secret_encrypted: string }[]>`
    select secret_encrypted from webhook_endpoints where merchant_id = ${acme.id} and id = ${second.id}`;
  t.throws(
    () => decryptSecretWithAny(keys, row!.secret_encrypted, secretPlace('webhook-secret', second.id, acme.id)),
    UndecryptableSecret,
  );
  t.equal(
    decryptSecretWithAny(keys, row!.secret_encrypted, secretPlace('webhook-secret', first.id, acme.id)).plaintext,
    first.secret,
    'it opens only where it was written',
  );
});

t.test("a stored Idempotency-Key answer copied to another key is never replayed as that key's", async (t) => {
  const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });
  const body = { email: 'dave@example.com' };
  const first = await acme.client.post('/api/v1/affiliates', body, keyed('first'));
  t.equal(first.status, 201);
  // The second key's first request conflicts (the e-mail is taken): its answer is stored too.
  const second = await acme.client.post('/api/v1/affiliates', body, keyed('second'));
  t.equal(second.status, 409);
  await platform.sql`
    update idempotency_keys set body = (select body from idempotency_keys where owner = ${acme.keyId} and key = 'first')
    where owner = ${acme.keyId} and key = 'second'`;
  const replay = await acme.client.post('/api/v1/affiliates', body, keyed('second'));
  t.equal(replay.status, 503, 'not the other key’s answer: the stored answer cannot be read');
  t.equal(replay.body?.error?.code, 'UNAVAILABLE', 'in the envelope');
  t.notMatch(replay.text, /dave@example\.com/);
  t.not(replay.headers.get('idempotent-replayed'), 'true');
});
