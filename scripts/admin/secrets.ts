import { decryptionKeys, loadConfig, CommonEnv } from '@platform/shared/config';
import { decryptSecretWithAny, encryptSecret, UndecryptableSecret } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { vaultKeyId } from '@platform/shared/vault';
import { Type } from '@sinclair/typebox';
import { readAgain, readPage, writeRewrites, type EncryptedColumn, type Rewrite } from './secrets-rows.ts';

/**
 * Every column that holds a value encrypted at rest (crypto.ts encryptSecret): what `secrets re-encrypt` moves to a
 * new ENCRYPTION_KEY (and from format v1 to v2), in this order. A column added with such values is listed here;
 * test/cli/secrets-rotation.security.test.ts compares the list with the schema (every `%_encrypted` column, plus those named
 * otherwise) and fails on one that is missing.
 */
export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  { table: 'webhook_endpoints', column: 'secret_encrypted', purpose: 'webhook-secret', key: ['id'] },
  { table: 'webhook_endpoints', column: 'previous_secret_encrypted', purpose: 'webhook-secret', key: ['id'] },
  { table: 'vault_secrets', column: 'ciphertext', purpose: 'vault', key: ['id'], keyId: 'key_id' },
  { table: 'payment_accounts', column: 'bank_account_encrypted', purpose: 'bank-account', key: ['id'] },
  { table: 'idempotency_keys', column: 'body', purpose: 'idempotency-answer', key: ['owner', 'key'], bytes: true },
  { table: 'idempotency_keys', column: 'reply_body', purpose: 'idempotency-reply', key: ['owner', 'key'], bytes: true },
  { table: 'mails', column: 'content_encrypted', purpose: 'mail', key: ['id'] },
];

/** Rows read and rewritten per statement. */
const BATCH = 500;
/** How many times a row that changed while being re-encrypted is read again before it is reported. */
const ROUNDS = 3;

export const SECRETS_USAGE = `  secrets re-encrypt                          re-encrypts every secret at rest under ENCRYPTION_KEY
                                              (those under ENCRYPTION_KEYS_PREVIOUS or in format v1; run after
                                              changing the key, and once after upgrading to format v2)`;

interface ColumnReport {
  column: string;
  re_encrypted: number;
  already_current: number;
  /** Rows whose value no configured key opens: their keys (never the values). */
  undecryptable: string[];
  /** Rows whose value kept changing while it was being re-encrypted: their keys. A second run takes them. */
  changing: string[];
}

/**
 * Re-encrypts every value of ENCRYPTED_COLUMNS that is not as encryptSecret writes it now (under an earlier key of
 * ENCRYPTION_KEYS_PREVIOUS, or in format v1, which binds no row) under the current ENCRYPTION_KEY, batch by batch,
 * each row rewritten only if its value is still the one read (a change meanwhile wins, and is read again). Safe to
 * run again, and while the services run: they decrypt with either key until it has finished. Values no key opens
 * are reported by row key and left as they are; the command then fails (exit code 1), so that the operator looks
 * before dropping the old key.
 */
export async function reEncryptSecrets(sql: Sql): Promise<{ columns: ColumnReport[] }> {
  const config = loadConfig(
    Type.Object({
      APP_ENV: CommonEnv.APP_ENV,
      ENCRYPTION_KEY: CommonEnv.ENCRYPTION_KEY,
      ENCRYPTION_KEYS_PREVIOUS: CommonEnv.ENCRYPTION_KEYS_PREVIOUS,
    }),
  );
  const keys = decryptionKeys(config);
  const reports: ColumnReport[] = [];
  for (const column of ENCRYPTED_COLUMNS) reports.push(await reEncryptColumn(sql, keys, column));
  const failed = reports.reduce((n, r) => n + r.undecryptable.length + r.changing.length, 0);
  if (failed > 0) {
    process.exitCode = 1;
    process.stderr.write(
      `admin: ${failed} secret(s) could not be re-encrypted (no configured key opens them, or they kept changing);` +
        ' listed by row in the output: keep the old key until they are\n',
    );
  }
  return { columns: reports };
}

async function reEncryptColumn(sql: Sql, keys: Buffer[], c: EncryptedColumn): Promise<ColumnReport> {
  const report: ColumnReport = {
    column: `${c.table}.${c.column}`,
    re_encrypted: 0,
    already_current: 0,
    undecryptable: [],
    changing: [],
  };
  const currentKeyId = c.keyId ? vaultKeyId(keys[0]!) : null;
  for (let after: string[] | null = null; ;) {
    const page = await readPage(sql, c, after, BATCH);
    if (page.length === 0) return report;
    after = page[page.length - 1]!.key;
    let rows = page;
    for (let round = 1; rows.length > 0; round++) {
      const rewrites: Rewrite[] = [];
      for (const row of rows) {
        try {
          const place = { purpose: c.purpose, row: row.bound };
          const { plaintext, current } = decryptSecretWithAny(keys, row.value, place);
          if (current && row.keyId === currentKeyId) report.already_current++;
          else rewrites.push({ row, value: encryptSecret(keys[0]!, plaintext, place) });
        } catch (err) {
          if (!(err instanceof UndecryptableSecret)) throw err;
          report.undecryptable.push(row.key.join(':'));
        }
      }
      if (rewrites.length === 0) break;
      const left = await writeRewrites(sql, c, rewrites, currentKeyId);
      report.re_encrypted += rewrites.length - left.size;
      const changed = rewrites.filter((_, i) => left.has(i)).map((w) => w.row);
      if (round === ROUNDS) {
        report.changing.push(...changed.map((r) => r.key.join(':')));
        break;
      }
      rows = changed.length > 0 ? await readAgain(sql, c, changed) : [];
    }
  }
}
