import { randomBytes } from 'node:crypto';
import t from 'tap';
import { decryptSecretWithAny, encryptSecret, secretPlace, UndecryptableSecret } from '@platform/shared/crypto';
import { encryptV1 } from '../helpers/secrets-v1.ts';

// Secrets at rest: a key per purpose, each value bound to its row and tenant (AES-GCM associated data), and values
// of format v1 (one key for every purpose, bound to nothing) still read until `secrets re-encrypt` rewrites them.
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const endpoint = secretPlace('webhook-secret', 'we_1', 'mer_1');

t.test('a value opens at its own place, under the key of its purpose', async (t) => {
  const stored = encryptSecret(NEW, 'whsec_abc', endpoint);
  t.match(stored, /^v2:[\w-]+:[\w-]+:[\w-]+$/, 'format v2: iv, tag and ciphertext in base64url');
  t.notMatch(stored, 'whsec_abc');
  t.same(decryptSecretWithAny([NEW, OLD], stored, endpoint), { plaintext: 'whsec_abc', keyIndex: 0, current: true });
  t.same(
    decryptSecretWithAny([NEW, OLD], encryptSecret(OLD, 'whsec_abc', endpoint), endpoint),
    { plaintext: 'whsec_abc', keyIndex: 1, current: false },
    'under a previous key: opens, and is not current',
  );
  t.not(encryptSecret(NEW, 'whsec_abc', endpoint), stored, 'a fresh iv each time');
});

t.test('moved to another row, tenant or purpose, a value does not decrypt', async (t) => {
  const stored = encryptSecret(NEW, 'whsec_abc', endpoint);
  const elsewhere = {
    'another endpoint of the merchant': secretPlace('webhook-secret', 'we_2', 'mer_1'),
    'the same endpoint id under another merchant': secretPlace('webhook-secret', 'we_1', 'mer_2'),
    'another purpose with the same row values': secretPlace('vault', 'we_1', 'mer_1'),
  };
  for (const [what, place] of Object.entries(elsewhere))
    t.throws(() => decryptSecretWithAny([NEW, OLD], stored, place), UndecryptableSecret, what);

  const bank = encryptSecret(NEW, '{"account_number":"000123456789"}', secretPlace('bank-account', 'acct_1', 'false'));
  t.throws(
    () => decryptSecretWithAny([NEW], bank, secretPlace('bank-account', 'acct_1', 'true')),
    UndecryptableSecret,
    "a test-mode account's bank details do not open as a live-mode account's",
  );
});

t.test('the bound values cannot be shifted across their separator', async (t) => {
  // An Idempotency-Key may hold ':'; the owner and key 'a:b' + 'c' are not 'a' + 'b:c'.
  const stored = encryptSecret(NEW, 'answer', secretPlace('idempotency-answer', 'a:b', 'c'));
  t.throws(
    () => decryptSecretWithAny([NEW], stored, secretPlace('idempotency-answer', 'a', 'b:c')),
    UndecryptableSecret,
  );
  t.equal(decryptSecretWithAny([NEW], stored, secretPlace('idempotency-answer', 'a:b', 'c')).plaintext, 'answer');
});

t.test('a value of format v1 still decrypts with its key, and is never current', async (t) => {
  const legacy = encryptV1(OLD, 'whsec_legacy');
  t.same(decryptSecretWithAny([NEW, OLD], legacy, endpoint), {
    plaintext: 'whsec_legacy',
    keyIndex: 1,
    current: false,
  });
  t.same(
    decryptSecretWithAny([OLD], legacy, endpoint),
    { plaintext: 'whsec_legacy', keyIndex: 0, current: false },
    'under the current key too: it binds no row, so re-encrypt rewrites it',
  );
  t.throws(() => decryptSecretWithAny([NEW], legacy, endpoint), UndecryptableSecret, 'not with another key');
});

t.test('damaged or unknown values are undecryptable, naming no secret', async (t) => {
  const stored = encryptSecret(NEW, 'whsec_abc', endpoint);
  const [version, iv, tag, ciphertext] = stored.split(':');
  const damaged = {
    'an unknown version': ['v3', iv, tag, ciphertext].join(':'),
    'a changed tag': [version, iv, Buffer.alloc(16).toString('base64url'), ciphertext].join(':'),
    'a part too many': `${stored}:x`,
    'no parts': 'whsec_abc',
  };
  for (const [what, value] of Object.entries(damaged)) {
    const err = t.throws(() => decryptSecretWithAny([NEW], value, endpoint), UndecryptableSecret, what);
    t.notMatch((err as Error).message, 'whsec', 'the message names no secret');
  }
});
