import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidInput } from './errors.ts';

/**
 * Keyset cursors: the (created_at, id) of the last row of a page, signed with HMAC over the merchant and the
 * list's filters. A forged cursor, or one taken from another merchant or another filter set, fails the check.
 */
export interface CursorPosition {
  created_at: string;
  id: string;
}

export interface CursorScope {
  merchantId: string;
  list: string;
  filters: Record<string, unknown>;
}

function encodeCursor(key: Buffer, scope: CursorScope, position: CursorPosition): string {
  const payload = Buffer.from(JSON.stringify([position.created_at, position.id])).toString('base64url');
  return `${payload}.${sign(key, scope, payload)}`;
}

function decodeCursor(key: Buffer, scope: CursorScope, cursor: string): CursorPosition {
  const bad = () => invalidInput('cursor', 'is not a cursor issued for this list');
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw bad();
  const payload = cursor.slice(0, dot);
  // Compared as text, not as decoded bytes: base64url decoding ignores the padding bits of the last digit and
  // skips foreign characters, so several spellings would decode to the same signature.
  const given = Buffer.from(cursor.slice(dot + 1), 'utf8');
  const expected = Buffer.from(sign(key, scope, payload), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
  try {
    const [created_at, id] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof created_at !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(created_at))) throw bad();
    return { created_at, id };
  } catch {
    throw bad();
  }
}

function sign(key: Buffer, scope: CursorScope, payload: string): string {
  const filters = Object.keys(scope.filters)
    .sort()
    .map((k) => [k, scope.filters[k] ?? null]);
  return createHmac('sha256', key)
    .update(JSON.stringify([scope.merchantId, scope.list, filters, payload]))
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/**
 * One page of a keyset-paged list: asks `fetch` for one row more than the limit (which tells whether another page
 * exists without a count query) and answers `{ data, next_cursor }` with the cursor signed for `scope`.
 */
export async function keysetPage<R extends { created_at: Date | string; id: string }, T>(opts: {
  key: Buffer;
  scope: CursorScope;
  cursor: string | undefined;
  limit: number;
  fetch: (after: CursorPosition | undefined, limit: number) => Promise<R[]>;
  present: (row: R) => T;
}): Promise<{ data: T[]; next_cursor: string | null }> {
  const after = opts.cursor ? decodeCursor(opts.key, opts.scope, opts.cursor) : undefined;
  const rows = await opts.fetch(after, opts.limit + 1);
  const page = rows.slice(0, opts.limit);
  const last = page[page.length - 1];
  return {
    data: page.map(opts.present),
    next_cursor:
      rows.length > opts.limit && last
        ? encodeCursor(opts.key, opts.scope, { created_at: isoString(last.created_at), id: last.id })
        : null,
  };
}

const isoString = (t: Date | string) => (typeof t === 'string' ? t : t.toISOString());
