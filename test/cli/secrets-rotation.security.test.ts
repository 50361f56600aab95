import { enqueueMail } from '@platform/shared/mail';
import { randomBytes } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/nats-core';
import t from 'tap';
import { BOUND_COLUMNS, decryptSecretWithAny, secretPlace, UndecryptableSecret } from '@platform/shared/crypto';
import { keepReply, openReply } from '@platform/shared/idempotent-reply';
import { readPayoutDetails } from '@platform/shared/payee';
import { vaultKeyId } from '@platform/shared/vault';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { readPage } from '../../scripts/admin/secrets-rows.ts';
import { ENCRYPTED_COLUMNS } from '../../scripts/admin/secrets.ts';
import { runAdminWithEnv } from '../helpers/cli.ts';
import { ApiClient } from '../helpers/client.ts';
import { captureLogger, startPlatform } from '../helpers/platform.ts';
import { encryptV1 } from '../helpers/secrets-v1.ts';
import { registerEndpoint } from '../helpers/webhooks.ts';
import { createAffiliate } from '../events/setup.ts';
import { attachPayments, onboard, ONBOARDING_FORM } from '../payments/setup.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

// `admin secrets re-encrypt` after a key change: every column encrypted at rest (the schema's `%_encrypted` ones and
// those named otherwise) moves to the new key and to format v2, values of format v1 included, so that the old key
// can be dropped; a value it cannot move makes it fail.
t.setTimeout(240_000);
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const platform = await startPlatform(t, { env: { ENCRYPTION_KEY: OLD.toString('base64') } });
const stack = await attachPayments(t, platform);
const { id: merchantId, client } = await platform.merchant();
const rotation = {
  DATABASE_URL: platform.databaseUrl,
  ENCRYPTION_KEY: NEW.toString('base64'),
  ENCRYPTION_KEYS_PREVIOUS: OLD.toString('base64'),
};
const reEncrypt = (env: Record<string, string> = rotation) => runAdminWithEnv(env, 'secrets', 're-encrypt');
const name = (c: { table: string; column: string }) => `${c.table}.${c.column}`;

// What the rows hold before the key change: values the services wrote under the old key, and values of format v1
// (written by a release before v2) put in place as such.
const affiliate = await createAffiliate(client, 'current@example.com');
const legacyAffiliate = await createAffiliate(client, 'legacy@example.com');
const endpoint = await registerEndpoint(platform, merchantId, { url: 'http://127.0.0.1:9/hook' });
const account = await stack.test.accounts.create({ type: 'express', email: 'bank@example.com' });
const legacyAccount = await stack.test.accounts.create({ type: 'express', email: 'legacy-bank@example.com' });
const keyed = { headers: { 'idempotency-key': 'rotate-me' } };
const firstAnswer = await client.post('/api/v1/affiliates', { email: 'keyed@example.com' }, keyed);
// A reply a service kept on a claim its gateway gave up waiting for, as the service keeps it.
const claim = { owner: 'key_kept', key: 'kept-reply' };
await platform.sql`
  insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
  values (${claim.owner}, ${claim.key}, '\\x00', 'req_kept', now() + interval '1 minute')`;
await keepReply(
  { sql: platform.sql, encryptionKey: OLD, log: captureLogger('payments').log },
  claim,
  { request_id: 'req_kept', deadline: Date.now() + 5000 },
  { done: true, headers: natsHeaders(), data: Buffer.from('{"id":"po_kept"}') },
);
// A mail waiting to be sent (no dispatcher runs here), its link a credential.
await platform.sql.begin((tx) =>
  enqueueMail(tx, OLD, {
    merchantId,
    kind: 'verify_email',
    to: 'waiting@example.com',
    subject: 'Verify',
    content: { text: 'token=waiting', html: '<p>token=waiting</p>', links: [] },
  }),
);

t.test('the rotation covers every encrypted column of the schema, by its primary key', async (t) => {
  // Encrypted columns not named `…_encrypted`: the vault's, the gateway's stored Idempotency-Key answers, and the
  // replies services keep on a key's claim (shared/src/idempotent-reply.ts).
  const namedOtherwise = ['idempotency_keys.body', 'idempotency_keys.reply_body', 'vault_secrets.ciphertext'];
  const suffixed = await platform.sql<{ name: string }[]>`
    select table_name || '.' || column_name as name from information_schema.columns
    where table_schema = current_schema() and column_name like '%\\_encrypted' order by 1`;
  t.ok(suffixed.length >= 3, 'the schema has `_encrypted` columns');
  t.same(
    ENCRYPTED_COLUMNS.map(name).sort(),
    [...suffixed.map((r) => r.name), ...namedOtherwise].sort(),
    'secrets re-encrypt walks exactly these',
  );
  for (const c of ENCRYPTED_COLUMNS) {
    const [pk] = await platform.sql<{ columns: string[] }[]>`
      select array_agg(a.attname order by k.n)::text[] as columns
      from pg_constraint p
      cross join unnest(p.conkey) with ordinality as k (attnum, n)
      join pg_attribute a on a.attrelid = p.conrelid and a.attnum = k.attnum
      where p.conrelid = ${c.table}::regclass and p.contype = 'p'`;
    const [partitioned] = await platform.sql<{ unindexed: string[] }[]>`
      select array(
        select i.inhrelid::regclass::text from pg_inherits i
        where i.inhparent = ${c.table}::regclass and not exists (
          select 1 from pg_index x
          where x.indrelid = i.inhrelid and x.indnatts = ${c.key.length}
            and (select array_agg(a.attname order by k.n)::text[]
                 from unnest(x.indkey) with ordinality as k (attnum, n)
                 join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.attnum) = ${c.key}::text[])
      ) as unindexed
      from pg_class where oid = ${c.table}::regclass and relkind = 'p'`;
    if (partitioned) {
      // A partitioned table can have no key without its time column (idempotency_keys: one row per key by the
      // claim's lock, services/gateway/src/http/idempotency/queries.ts): every partition is indexed on the row's key.
      t.same(partitioned.unindexed, [], `${name(c)}: walked by the key each partition is indexed on`);
    } else t.same(c.key, pk!.columns, `${name(c)}: walked by its primary key`);
    const present = await platform.sql<{ column_name: string }[]>`
      select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = ${c.table}
        and column_name in ${platform.sql([...BOUND_COLUMNS[c.purpose], ...(c.keyId ? [c.keyId] : [])])}`;
    t.equal(present.length, BOUND_COLUMNS[c.purpose].length + (c.keyId ? 1 : 0), `${name(c)}: its bound columns exist`);
  }
});

t.test('before the key change: the services write under the old key; some rows are still v1', async (t) => {
  t.equal(firstAnswer.status, 201);
  for (const [id, paypal] of [
    [affiliate.id, 'current@example.com'],
    [legacyAffiliate.id, 'legacy@example.com'],
  ] as const)
    t.equal((await putPayoutDetails(client, id, { method: 'paypal', paypal_email: paypal })).status, 200);
  await onboard(stack, account.id);
  await onboard(stack, legacyAccount.id, { account_number: '000999888777' });

  const legacyDetails = JSON.stringify({ method: 'paypal', paypal_email: 'legacy@example.com' });
  await platform.sql`
    update vault_secrets set ciphertext = ${encryptV1(OLD, legacyDetails)}
    where merchant_id = ${merchantId} and id = (select payout_details_vault_id from affiliates where id = ${legacyAffiliate.id})`;
  const legacyBank = JSON.stringify({
    routing_number: '110000000',
    account_number: '000999888777',
    holder: 'Jane Doe',
  });
  await platform.sql`
    update payment_accounts set bank_account_encrypted = ${encryptV1(OLD, legacyBank)} where id = ${legacyAccount.id}`;
  await platform.sql`
    update webhook_endpoints set previous_secret_encrypted = ${encryptV1(OLD, 'whsec_bGVnYWN5')},
      previous_secret_expires_at = now() + interval '1 hour'
    where id = ${endpoint.id} and merchant_id = ${merchantId}`;

  const [bank] = await platform.sql<{ merchant_id: string | null; bank_account_encrypted: string }[]>`
    select merchant_id, bank_account_encrypted from payment_accounts where id = ${account.id}`;
  t.equal(bank!.merchant_id, null, 'a payment account bound to no merchant');
  t.match(bank!.bank_account_encrypted, /^v2:/);
  await t.rejects(readPayoutDetails(platform.sql, [NEW], merchantId, affiliate.id), UndecryptableSecret);
});

t.test('re-encrypt moves every column to the new key and to v2, reporting each', async (t) => {
  const [answers] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from idempotency_keys where body is not null`;
  t.ok(answers!.n >= 1, 'stored Idempotency-Key answers');
  const run = await reEncrypt();
  t.equal(run.code, 0, run.stderr);
  const moved = (column: string, re_encrypted: number) => ({
    column,
    re_encrypted,
    already_current: 0,
    undecryptable: [],
    changing: [],
  });
  t.same(run.json, {
    columns: [
      moved('webhook_endpoints.secret_encrypted', 1),
      moved('webhook_endpoints.previous_secret_encrypted', 1),
      moved('vault_secrets.ciphertext', 2),
      moved('payment_accounts.bank_account_encrypted', 2),
      moved('idempotency_keys.body', answers!.n),
      moved('idempotency_keys.reply_body', 1),
      moved('mails.content_encrypted', 1),
    ],
  });
  for (const secret of [
    'current@example.com',
    'legacy@example.com',
    '000123456789',
    '000999888777',
    'whsec_',
    'token=',
  ])
    t.notMatch(run.stdout, secret, 'the output holds no secret');

  const again = await reEncrypt();
  t.equal(again.code, 0, again.stderr);
  t.same(
    again.json.columns.map((c: { re_encrypted: number; already_current: number }) => [
      c.re_encrypted,
      c.already_current,
    ]),
    [
      [0, 1],
      [0, 1],
      [0, 2],
      [0, 2],
      [0, answers!.n],
      [0, 1],
      [0, 1],
    ],
    'a second run has nothing to do',
  );
});

t.test('then the old key is not needed: every value opens with the new key alone, at its row', async (t) => {
  for (const c of ENCRYPTED_COLUMNS) {
    for (const row of await readPage(platform.sql, c, null, 1000)) {
      t.match(row.value, /^v2:/, `${name(c)} ${row.key.join(':')}: format v2`);
      t.ok(decryptSecretWithAny([NEW], row.value, { purpose: c.purpose, row: row.bound }).current);
      if (c.keyId) t.equal(row.keyId, vaultKeyId(NEW), 'the vault row names the new key');
    }
  }
  const bankOf = async (id: string) => {
    const [row] = await platform.sql<{ bank_account_encrypted: string }[]>`
      select bank_account_encrypted from payment_accounts where id = ${id}`;
    const place = secretPlace('bank-account', id, 'false');
    return JSON.parse(decryptSecretWithAny([NEW], row!.bank_account_encrypted, place).plaintext) as object;
  };
  t.same(await bankOf(account.id), {
    routing_number: ONBOARDING_FORM.routing_number,
    account_number: ONBOARDING_FORM.account_number,
    holder: ONBOARDING_FORM.account_holder_name,
  });
  t.match(await bankOf(legacyAccount.id), { account_number: '000999888777' }, 'the v1 bank account too');
  t.same(await readPayoutDetails(platform.sql, [NEW], merchantId, legacyAffiliate.id), {
    method: 'paypal',
    paypal_email: 'legacy@example.com',
  });
  const [hook] = await platform.sql<{ secret_encrypted: string; previous_secret_encrypted: string }[]>`
    select secret_encrypted, previous_secret_encrypted from webhook_endpoints where id = ${endpoint.id}`;
  const hookPlace = secretPlace('webhook-secret', endpoint.id, merchantId);
  t.equal(decryptSecretWithAny([NEW], hook!.secret_encrypted, hookPlace).plaintext, endpoint.secret);
  t.equal(decryptSecretWithAny([NEW], hook!.previous_secret_encrypted, hookPlace).plaintext, 'whsec_bGVnYWN5');
  const [kept] = await platform.sql<{ reply_body: Buffer }[]>`
    select reply_body from idempotency_keys where owner = ${claim.owner} and key = ${claim.key}`;
  t.equal(openReply([NEW], claim, kept!.reply_body).toString(), '{"id":"po_kept"}', 'the kept reply');

  // A gateway given only the new key replays the stored answer, byte for byte.
  const gateway = await startGateway(
    loadGatewayConfig({ ...platform.env, ENCRYPTION_KEY: NEW.toString('base64') }),
    captureLogger('gateway-new-key').log,
  );
  t.teardown(() => gateway.close());
  const replay = await new ApiClient(`http://127.0.0.1:${gateway.port}`, client.key).post(
    '/api/v1/affiliates',
    { email: 'keyed@example.com' },
    keyed,
  );
  t.equal(replay.status, 201);
  t.equal(replay.headers.get('idempotent-replayed'), 'true');
  t.equal(replay.text, firstAnswer.text, 'the same answer');
});

t.test('a value no configured key opens is reported by row, left alone, and fails the command', async (t) => {
  const unknown = randomBytes(32);
  const stranger = encryptV1(unknown, 'whatever');
  await platform.sql`update payment_accounts set bank_account_encrypted = ${stranger} where id = ${account.id}`;
  const run = await reEncrypt({ DATABASE_URL: platform.databaseUrl, ENCRYPTION_KEY: NEW.toString('base64') });
  t.equal(run.code, 1, 'a non-zero exit');
  t.match(run.stderr, '1 secret(s) could not be re-encrypted');
  const bank = run.json.columns.find((c: { column: string }) => c.column === 'payment_accounts.bank_account_encrypted');
  t.same(bank, {
    column: 'payment_accounts.bank_account_encrypted',
    re_encrypted: 0,
    already_current: 1,
    undecryptable: [account.id],
    changing: [],
  });
  const [row] = await platform.sql<{ bank_account_encrypted: string }[]>`
    select bank_account_encrypted from payment_accounts where id = ${account.id}`;
  t.equal(row!.bank_account_encrypted, stranger, 'left as it was');
});
