import { decryptionKeys, loadConfig, CommonEnv } from '@platform/shared/config';
import { decryptSecretWithAny, encryptSecret, UndecryptableSecret } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { reEncryptVault } from '@platform/shared/vault';
import { Type } from '@sinclair/typebox';

/**
 * Every column that holds a secret encrypted at rest (crypto.ts encryptSecret), by table. A table added with such a
 * column is listed here, so that `secrets re-encrypt` moves it to a new ENCRYPTION_KEY with the rest. The vault
 * (vault_secrets) is not: it keeps each row's key id beside it, and shared/src/vault.ts reEncryptVault moves both.
 */
export const ENCRYPTED_COLUMNS: readonly { table: string; columns: readonly string[] }[] = [
  { table: 'webhook_endpoints', columns: ['secret_encrypted', 'previous_secret_encrypted'] },
];

/** Rows read and rewritten per statement. */
const BATCH = 500;

export const SECRETS_USAGE = `  secrets re-encrypt                          re-encrypts every secret at rest under ENCRYPTION_KEY
                                              (those under ENCRYPTION_KEYS_PREVIOUS; run after changing the key)`;

interface ColumnReport {
  column: string;
  re_encrypted: number;
  already_current: number;
  /** Rows whose value no configured key opens: their ids (never the values). */
  undecryptable: string[];
}

/**
 * Re-encrypts every value of ENCRYPTED_COLUMNS that an earlier key (ENCRYPTION_KEYS_PREVIOUS) opens under the current
 * ENCRYPTION_KEY, batch by batch, each row rewritten only if its value is still the one read (a rotation meanwhile
 * wins). Safe to run again, and while the services run: they decrypt with either key until it has finished. Values
 * no key opens are reported by row id and left as they are; the command then fails, so that the operator looks.
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
  for (const { table, columns } of ENCRYPTED_COLUMNS) {
    for (const column of columns) reports.push(await reEncryptColumn(sql, keys, table, column));
  }
  // The vault keeps the id of each row's key beside it, so it moves rows and key ids together.
  reports.push({ column: 'vault_secrets.ciphertext', ...(await reEncryptVault(sql, keys)) });
  const undecryptable = reports.reduce((n, r) => n + r.undecryptable.length, 0);
  if (undecryptable > 0) {
    process.exitCode = 1;
    process.stderr.write(
      `admin: ${undecryptable} secret(s) open with none of the configured keys; listed by row id in the output\n`,
    );
  }
  return { columns: reports };
}

async function reEncryptColumn(sql: Sql, keys: Buffer[], table: string, column: string): Promise<ColumnReport> {
  const report: ColumnReport = { column: `${table}.${column}`, re_encrypted: 0, already_current: 0, undecryptable: [] };
  let after = '';
  for (;;) {
    // Every merchant's rows: the key is the platform's, not a merchant's. Each row is rewritten by id and merchant.
    const rows = await sql<{ id: string; merchant_id: string; value: string }[]>`
      select id, merchant_id, ${sql(column)} as value from ${sql(table)}
      where ${sql(column)} is not null and id > ${after}
      order by id limit ${BATCH}`;
    if (rows.length === 0) return report;
    after = rows[rows.length - 1]!.id;
    const rewritten: { id: string; merchant_id: string; old: string; value: string }[] = [];
    for (const row of rows) {
      try {
        const { plaintext, keyIndex } = decryptSecretWithAny(keys, row.value);
        if (keyIndex === 0) report.already_current++;
        else
          rewritten.push({
            id: row.id,
            merchant_id: row.merchant_id,
            old: row.value,
            value: encryptSecret(keys[0]!, plaintext),
          });
      } catch (err) {
        if (!(err instanceof UndecryptableSecret)) throw err;
        report.undecryptable.push(row.id);
      }
    }
    if (rewritten.length === 0) continue;
    const updated = await sql`
      update ${sql(table)} t set ${sql(column)} = r.value
      from json_to_recordset(${JSON.stringify(rewritten)}::text::json) as r (id text, merchant_id text, old text, value text)
      where t.id = r.id and t.merchant_id = r.merchant_id and t.${sql(column)} = r.old`;
    report.re_encrypted += updated.count;
  }
}
