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

/** The rows of a page, from a fetch of one row more than the limit: the extra one says whether another page exists. */
function pageOf<R>(rows: R[], limit: number): { page: R[]; more: boolean } {
  return { page: rows.slice(0, limit), more: rows.length > limit };
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
  const { page, more } = pageOf(await opts.fetch(after, opts.limit + 1), opts.limit);
  const last = page[page.length - 1];
  return {
    data: page.map(opts.present),
    next_cursor:
      more && last ? encodeCursor(opts.key, opts.scope, { created_at: isoString(last.created_at), id: last.id }) : null,
  };
}

/** Where a page of a list paged by object ids starts: after (older than) or before (newer than) a row, or at the newest. */
export type RowPosition = { direction: 'after' | 'before'; created_at: Date; id: string } | null;

/**
 * One page of a list paged by object ids, newest first (the /v1 surface's lists, as Stripe pages them): `after`
 * pages towards older rows and `before` towards newer ones (the page still newest first); `has_more` says whether
 * more lie that way. The row a cursor names must be one this caller may see (`locate` answers its created time);
 * the refusals, for both cursors at once or one that names nothing, are the surface's to word.
 */
export async function objectIdPage<R extends { created_at: Date; id: string }, T>(opts: {
  after: string | undefined;
  before: string | undefined;
  limit: number;
  locate: (id: string) => Promise<Date | null>;
  fetch: (position: RowPosition, limit: number) => Promise<R[]>;
  present: (row: R) => T;
  refuse: { both(): Error; unknown(cursor: 'after' | 'before', id: string): Error };
}): Promise<{ data: T[]; has_more: boolean }> {
  if (opts.after !== undefined && opts.before !== undefined) throw opts.refuse.both();
  let position: RowPosition = null;
  const direction = opts.after !== undefined ? 'after' : opts.before !== undefined ? 'before' : null;
  const id = opts.after ?? opts.before;
  if (direction && id !== undefined) {
    const created = await opts.locate(id);
    if (!created) throw opts.refuse.unknown(direction, id);
    position = { direction, created_at: created, id };
  }
  const { page, more } = pageOf(await opts.fetch(position, opts.limit + 1), opts.limit);
  if (position?.direction === 'before') page.reverse();
  return { data: page.map(opts.present), has_more: more };
}

const isoString = (t: Date | string) => (typeof t === 'string' ? t : t.toISOString());
