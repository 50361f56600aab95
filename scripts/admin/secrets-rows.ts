import { BOUND_COLUMNS, type SecretPurpose } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import type { PendingQuery, Row } from 'postgres';

/** A column that holds values encrypted at rest (crypto.ts encryptSecret), as `secrets re-encrypt` walks it. */
export interface EncryptedColumn {
  table: string;
  column: string;
  /** Which derived key encrypts it, and so which of the row's columns are bound to it (BOUND_COLUMNS). */
  purpose: SecretPurpose;
  /** The table's primary key: the order rows are walked in, and how each is rewritten. */
  key: readonly string[];
  /** bytea holding the value's text, rather than text. */
  bytes?: true;
  /** A column beside the value naming the key it is under (vault.ts vaultKeyId), rewritten with it. */
  keyId?: string;
}

/** One stored value as read: its row's key and bound values (as text), the value, and the key id beside it. */
export interface StoredValue {
  key: string[];
  bound: string[];
  value: string;
  keyId: string | null;
}

/** A value to write over the one read, if the row still holds that one. */
export interface Rewrite {
  row: StoredValue;
  value: string;
}

// The bound columns are text and booleans (livemode), compared as their text in Postgres: `true` / `false`.
function asText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  throw new TypeError(`a column of type ${typeof v} cannot be bound to an encrypted value`);
}

type Fragment = PendingQuery<Row[]>;

const list = (sql: Sql, parts: Fragment[], separator: 'and' | ',') =>
  parts.reduce((joined, part) => (separator === 'and' ? sql`${joined} and ${part}` : sql`${joined}, ${part}`));

/** The value as stored: text, or for a bytea column the bytes of its text. */
const stored = (sql: Sql, c: EncryptedColumn, text: Fragment) => (c.bytes ? sql`convert_to(${text}, 'UTF8')` : text);

/**
 * The condition that matches the table's row `t` to the JSON element `r.e` describing it: the primary key and every
 * bound column (the tenant: merchant or mode), so that a rewrite never reaches another tenant's row.
 */
function sameRow(sql: Sql, c: EncryptedColumn) {
  const keys = c.key.map((k, i) => sql`t.${sql(k)} = r.e -> 'key' ->> ${i}::int`);
  const bound = BOUND_COLUMNS[c.purpose].map(
    (b, i) => sql`coalesce(t.${sql(b)}::text, '') = r.e -> 'bound' ->> ${i}::int`,
  );
  return list(sql, [...keys, ...bound], 'and');
}

function toStoredValues(c: EncryptedColumn, rows: Record<string, unknown>[]): StoredValue[] {
  return rows.map((r) => ({
    key: c.key.map((k) => asText(r[k])),
    bound: BOUND_COLUMNS[c.purpose].map((b) => asText(r[b])),
    value: Buffer.isBuffer(r['value']) ? r['value'].toString('utf8') : asText(r['value']),
    keyId: c.keyId ? asText(r['key_id']) : null,
  }));
}

const selected = (sql: Sql, c: EncryptedColumn) => {
  const columns = [...new Set([...c.key, ...BOUND_COLUMNS[c.purpose]])].map((name) => sql`t.${sql(name)}`);
  return sql`${list(sql, columns, ',')}, t.${sql(c.column)} as value ${c.keyId ? sql`, t.${sql(c.keyId)} as key_id` : sql``}`;
};

/**
 * The next `limit` rows holding a value, after `after` (a primary key) in key order. Every merchant's rows: the
 * key is the platform's, not a merchant's; each is rewritten by its key and bound tenant columns.
 */
export async function readPage(
  sql: Sql,
  c: EncryptedColumn,
  after: string[] | null,
  limit: number,
): Promise<StoredValue[]> {
  const past = after
    ? sql`and (${sql(c.key as string[])}) > (${list(
        sql,
        after.map((v) => sql`${v}`),
        ',',
      )})`
    : sql``;
  const rows = await sql<Record<string, unknown>[]>`
    select ${selected(sql, c)} from ${sql(c.table)} as t
    where t.${sql(c.column)} is not null ${past}
    order by ${sql(c.key as string[])} limit ${limit}`;
  return toStoredValues(c, rows);
}

/** The rows as they are now, of those given (a row deleted meanwhile is not answered). */
export async function readAgain(sql: Sql, c: EncryptedColumn, rows: StoredValue[]): Promise<StoredValue[]> {
  const wanted = rows.map((r) => ({ key: r.key, bound: r.bound }));
  const found = await sql<Record<string, unknown>[]>`
    select ${selected(sql, c)} from ${sql(c.table)} as t
    join jsonb_array_elements(${sql.json(wanted)}) as r (e) on ${sameRow(sql, c)}
    where t.${sql(c.column)} is not null`;
  return toStoredValues(c, found);
}

/**
 * Writes each new value (and the current key's id, for a column that keeps one) where the row still holds the value
 * read: a change meanwhile (a webhook secret rotated, an answer stored again) is never overwritten. Answers the rows
 * that were not so rewritten, by their index in `rewrites`.
 */
export async function writeRewrites(
  sql: Sql,
  c: EncryptedColumn,
  rewrites: Rewrite[],
  currentKeyId: string | null,
): Promise<Set<number>> {
  const elements = rewrites.map((w, i) => ({
    i,
    key: w.row.key,
    bound: w.row.bound,
    old: w.row.value,
    value: w.value,
  }));
  const keyId = c.keyId && currentKeyId ? sql`, ${sql(c.keyId)} = ${currentKeyId}` : sql``;
  const done = await sql<{ i: number }[]>`
    update ${sql(c.table)} as t set ${sql(c.column)} = ${stored(sql, c, sql`r.e ->> 'value'`)} ${keyId}
    from jsonb_array_elements(${sql.json(elements)}) as r (e)
    where ${sameRow(sql, c)} and t.${sql(c.column)} = ${stored(sql, c, sql`r.e ->> 'old'`)}
    returning (r.e ->> 'i')::int as i`;
  const left = new Set(rewrites.map((_, i) => i));
  for (const { i } of done) left.delete(i);
  return left;
}
