import { randomBytes } from 'node:crypto';
import t from 'tap';
import { encryptSecret, secretPlace } from '@platform/shared/crypto';
import { newId } from '@platform/shared/ids';
import { readAgain, readPage, writeRewrites } from '../../scripts/admin/secrets-rows.ts';
import { ENCRYPTED_COLUMNS } from '../../scripts/admin/secrets.ts';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createTestDatabase } from '../helpers/platform.ts';
import { encryptV1 } from '../helpers/secrets-v1.ts';

// The statements of `secrets re-encrypt` against what may happen while it runs: a value changed after it was read
// (a webhook secret rotated) is never overwritten, and a rewrite reaches no row of another tenant.
const KEY = randomBytes(32);
const { sql } = await createTestDatabase(t);
const column = ENCRYPTED_COLUMNS.find((c) => c.table === 'webhook_endpoints' && c.column === 'secret_encrypted')!;
const answers = ENCRYPTED_COLUMNS.find((c) => c.table === 'idempotency_keys')!;
const merchantId = (await createMerchant(sql, 'Acme', 'growth'))!['id'] as string;

async function endpoint(secret: string): Promise<string> {
  const id = newId('we');
  await sql`
    insert into webhook_endpoints (id, merchant_id, url, event_types, secret_encrypted)
    values (${id}, ${merchantId}, 'https://example.com/hook', ${['payout.sent']}, ${encryptV1(KEY, secret)})`;
  return id;
}
const storedSecret = async (id: string) =>
  (await sql<{ v: string }[]>`select secret_encrypted as v from webhook_endpoints where id = ${id}`)[0]!.v;

t.test('a value changed after it was read is left to the change, and read again', async (t) => {
  const [changed, kept] = [await endpoint('whsec_one'), await endpoint('whsec_two')];
  const page = await readPage(sql, column, null, 10);
  t.same(
    page.map((r) => [r.key, r.bound]),
    [changed, kept].sort().map((id) => [[id], [id, merchantId]]),
    'keyed by id, bound to id and merchant',
  );
  const rotated = encryptSecret(KEY, 'whsec_rotated', secretPlace('webhook-secret', changed, merchantId));
  await sql`update webhook_endpoints set secret_encrypted = ${rotated} where id = ${changed}`;

  const rewrites = page.map((row) => ({
    row,
    value: encryptSecret(KEY, row.key[0] === changed ? 'whsec_one' : 'whsec_two', {
      purpose: column.purpose,
      row: row.bound,
    }),
  }));
  const left = await writeRewrites(sql, column, rewrites, null);
  const changedAt = page.findIndex((r) => r.key[0] === changed);
  t.same([...left], [changedAt], 'only the changed row is left');
  t.equal(await storedSecret(changed), rotated, 'the rotation meanwhile wins');
  t.equal(await storedSecret(kept), rewrites[1 - changedAt]!.value, 'the other row is rewritten');
  t.same(
    (await readAgain(sql, column, [page[changedAt]!])).map((r) => r.value),
    [rotated],
    'read again: its value now',
  );
});

t.test('a rewrite reaches no row whose bound tenant is not the one read', async (t) => {
  const id = await endpoint('whsec_three');
  const before = await storedSecret(id);
  const [row] = (await readPage(sql, column, null, 100)).filter((r) => r.key[0] === id);
  const forged = { ...row!, bound: [id, 'mer_other'] };
  const left = await writeRewrites(sql, column, [{ row: forged, value: 'v2:x:y:z' }], null);
  t.same([...left], [0], 'not rewritten');
  t.equal(await storedSecret(id), before);
  t.same(await readAgain(sql, column, [forged]), [], 'nor read as that tenant');
});

t.test('a bytea column is read and written as the text of its bytes, by a composite key', async (t) => {
  const value = encryptV1(KEY, 'eyJvayI6dHJ1ZX0=');
  await sql`
    insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until, status, headers, body)
    values ('key_a', 'k:1', '\\x00', 'req_1', now(), 200, '{}', ${Buffer.from(value)}),
           ('key_a', 'k:2', '\\x00', 'req_2', now(), 200, '{}', ${Buffer.from(value)}),
           ('key_b', 'k:1', '\\x00', 'req_3', now(), null, null, null)`;
  const first = await readPage(sql, answers, null, 1);
  t.same(
    first.map((r) => [r.key, r.value]),
    [[['key_a', 'k:1'], value]],
  );
  const rest = await readPage(sql, answers, first[0]!.key, 10);
  t.same(
    rest.map((r) => r.key),
    [['key_a', 'k:2']],
    'the next page after the composite key; a row without an answer is skipped',
  );
  const rewritten = encryptSecret(KEY, 'eyJvayI6dHJ1ZX0=', secretPlace('idempotency-answer', 'key_a', 'k:2'));
  t.same([...(await writeRewrites(sql, answers, [{ row: rest[0]!, value: rewritten }], null))], []);
  const [stored] = await sql<
    { body: Buffer }[]
  >`select body from idempotency_keys where owner = 'key_a' and key = 'k:2'`;
  t.equal(stored!.body.toString(), rewritten);
});
