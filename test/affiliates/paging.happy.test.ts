import t, { type Test } from 'tap';
import { newId } from '@platform/shared/ids';
import type { ApiClient, ApiResponse } from '../helpers/client.ts';
import { startPlatform } from '../helpers/platform.ts';

/**
 * Keyset paging of GET /api/v1/affiliates: newest first by (created_at, id), stable under concurrent
 * inserts, limit 1..100 (default 25), and cursors that are tamper-evident and bound to merchant and filters.
 */
const platform = await startPlatform(t);
const main = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
const STATUSES = ['approved', 'pending', 'suspended'] as const;

interface Row {
  id: string;
  created_at: string;
  status: string;
}

const HOUR = 3600_000;
let counter = 0;

/** Inserts affiliates directly, all with the given creation time (ties are what keyset paging must survive). */
async function insertRows(
  merchantId: string,
  n: number,
  createdAt: Date,
  status?: (typeof STATUSES)[number],
): Promise<Row[]> {
  const rows = Array.from({ length: n }, () => {
    const k = ++counter;
    return {
      id: newId('aff', createdAt.getTime()),
      merchant_id: merchantId,
      slug: `sql-${k}`,
      email: `sql${k}@example.com`,
      display_name: `Sql ${k}`,
      status: status ?? STATUSES[k % 3]!,
      created_at: createdAt,
      updated_at: createdAt,
    };
  });
  await platform.sql`insert into affiliates ${platform.sql(rows)}`;
  return rows.map((r) => ({ id: r.id, created_at: createdAt.toISOString(), status: r.status }));
}

async function createViaApi(client: ApiClient, status?: string): Promise<Row> {
  const k = ++counter;
  const res = await client.post('/api/v1/affiliates', { email: `api${k}@example.com`, ...(status ? { status } : {}) });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return { id: res.body.id, created_at: res.body.created_at, status: res.body.status };
}

/** Newest first: created_at descending, then id descending. */
const newerFirst = (a: Row, b: Row) =>
  a.created_at !== b.created_at ? (a.created_at > b.created_at ? -1 : 1) : a.id > b.id ? -1 : a.id < b.id ? 1 : 0;

function checkStrictlyNewestFirst(t: Test, seen: Row[]) {
  let ordered = true;
  for (let i = 1; i < seen.length; i++) {
    if (newerFirst(seen[i - 1]!, seen[i]!) >= 0) {
      ordered = false;
      t.fail(`out of order at ${i}: ${JSON.stringify(seen[i - 1])} then ${JSON.stringify(seen[i])}`);
    }
  }
  t.ok(ordered, 'strictly newest first by (created_at, id)');
}

const cursorProblem = (t: Test, res: ApiResponse, what: string) => {
  t.equal(res.status, 400, `${what}: 400`);
  t.strictSame(
    res.body,
    {
      error: {
        code: 'INVALID_INPUT',
        message: 'The request is invalid',
        request_id: res.headers.get('x-request-id'),
        details: [{ path: 'cursor', message: 'is not a cursor issued for this list' }],
      },
    },
    what,
  );
};

const page = (client: ApiClient, query: string) => client.get(`/api/v1/affiliates?${query}`);
const withCursor = (query: string, cursor: string) => `${query}${query ? '&' : ''}cursor=${encodeURIComponent(cursor)}`;

// The 60 originals: 20 through the API (newest), then two groups of 20 that share a creation time each, so that
// both page boundaries at limit 25 fall inside a group of equal created_at.
const originals: Row[] = [];
const now = Date.now();
originals.push(...(await insertRows(main.id, 20, new Date(now - 2 * HOUR))));
originals.push(...(await insertRows(main.id, 20, new Date(now - HOUR))));
for (let i = 0; i < 20; i++) originals.push(await createViaApi(main.client, STATUSES[i % 3]));

t.test('every original appears exactly once while others are inserted between pages', async (t) => {
  const seen: Row[] = [];
  const added: Row[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let last: ApiResponse | undefined;
  do {
    const query: string = cursor ? withCursor('limit=25', cursor) : 'limit=25';
    // The page is fetched while new affiliates are being created through the API.
    const [res, ...created] = await Promise.all([
      page(main.client, query),
      createViaApi(main.client),
      createViaApi(main.client, 'pending'),
    ]);
    added.push(...created);
    t.equal(res.status, 200, `page ${pages + 1}`);
    t.ok(res.body.data.length <= 25, 'no more than the limit');
    seen.push(...res.body.data.map((a: Row) => ({ id: a.id, created_at: a.created_at, status: a.status })));
    cursor = res.body.next_cursor;
    if (cursor) {
      t.equal(res.body.data.length, 25, 'a page with a next page is full');
      // Rows that tie with the cursor's position (same created_at, ids on both sides of it), a back-dated row,
      // and a newest row, all inserted before the next page is read.
      const edge = res.body.data[res.body.data.length - 1] as Row;
      added.push(...(await insertRows(main.id, 3, new Date(edge.created_at))));
      added.push(...(await insertRows(main.id, 1, new Date(now - 30 * 24 * HOUR))));
      added.push(await createViaApi(main.client));
    }
    last = res;
    pages++;
  } while (cursor && pages < 20);

  t.equal(last.body.next_cursor, null, 'the last page has next_cursor null');
  t.ok(pages >= 3, `${pages} pages`);

  const counts = new Map<string, number>();
  for (const r of seen) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
  const missing = originals.filter((o) => !counts.has(o.id));
  const repeated = [...counts].filter(([, n]) => n > 1);
  t.same(missing, [], 'no original is missing');
  t.same(repeated, [], 'no row appears twice');

  checkStrictlyNewestFirst(t, seen);
  const originalIds = new Set(originals.map((o) => o.id));
  t.same(
    seen.filter((r) => originalIds.has(r.id)).map((r) => r.id),
    [...originals].sort(newerFirst).map((r) => r.id),
    'the originals come in (created_at, id) descending order',
  );
  // Back-dated rows sort after every original, so every one inserted before the last page is read shows up.
  const backdated = added.filter((a) => a.created_at === new Date(now - 30 * 24 * HOUR).toISOString());
  t.ok(backdated.length >= 2, 'back-dated rows were inserted');
  for (const b of backdated) t.equal(counts.get(b.id), 1, 'a back-dated insert is listed once, at the end');
});

t.test('limit: default 25, 1 to 100, never clamped', async (t) => {
  // More than the maximum page: older ones below everything listed so far.
  await insertRows(main.id, 40, new Date(now - 3 * HOUR));
  const total = (
    await platform.sql<{ n: number }[]>`select count(*)::int as n from affiliates where merchant_id = ${main.id}`
  )[0]!.n;
  t.ok(total > 100, `${total} affiliates`);

  const byDefault = await page(main.client, '');
  t.equal(byDefault.status, 200);
  t.equal(byDefault.body.data.length, 25, 'default limit 25');
  t.type(byDefault.body.next_cursor, 'string');

  const max = await page(main.client, 'limit=100');
  t.equal(max.body.data.length, 100, 'limit 100 allowed');
  t.same(max.body.data.slice(0, 25), byDefault.body.data, 'the default page is the head of the long one');
  const one = await page(main.client, 'limit=1');
  t.equal(one.body.data.length, 1);

  const refused: [string, string, string][] = [
    ['limit=101', 'limit', 'must be <= 100'],
    ['limit=1000', 'limit', 'must be <= 100'],
    ['limit=0', 'limit', 'must be >= 1'],
    ['limit=-5', 'limit', 'must be >= 1'],
    ['limit=abc', 'limit', 'must be integer'],
    ['limit=2.5', 'limit', 'must be integer'],
    ['offset=25', 'offset', 'is not a known field'],
    ['page=2', 'page', 'is not a known field'],
    ['status=nope', 'status', 'must be one of: "pending", "approved", "rejected", "suspended"'],
  ];
  for (const [query, path, message] of refused) {
    const res = await page(main.client, query);
    t.equal(res.status, 400, query);
    t.strictSame(res.body, {
      error: {
        code: 'INVALID_INPUT',
        message: 'The request is invalid',
        request_id: res.headers.get('x-request-id'),
        details: [{ path, message }],
      },
    });
  }

  // A list of exactly one page: next_cursor null although the page is full.
  const exact = await platform.merchant();
  await insertRows(exact.id, 25, new Date(now - HOUR));
  const full = await page(exact.client, '');
  t.equal(full.body.data.length, 25);
  t.equal(full.body.next_cursor, null, 'no next page when exactly limit rows exist');
  const first = await page(exact.client, 'limit=24');
  t.equal(first.body.data.length, 24);
  const rest = await page(exact.client, withCursor('limit=24', first.body.next_cursor));
  t.equal(rest.body.data.length, 1);
  t.equal(rest.body.next_cursor, null);

  const empty = await platform.merchant();
  const none = await page(empty.client, '');
  t.strictSame(none.body, { data: [], next_cursor: null }, 'an empty list');
});

t.test('status filter pages through exactly the affiliates of that status', async (t) => {
  for (const status of STATUSES) {
    const expected = await platform.sql<
      Row[]
    >`select id from affiliates where merchant_id = ${main.id} and status = ${status}`;
    const seen: Row[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? withCursor(`status=${status}&limit=7`, cursor) : `status=${status}&limit=7`;
      const res = await page(main.client, query);
      t.equal(res.status, 200);
      seen.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    t.ok(pages > 2, `${status}: ${pages} pages`);
    t.ok(
      seen.every((a) => a.status === status),
      `only ${status}`,
    );
    t.equal(new Set(seen.map((a) => a.id)).size, seen.length, 'none repeated');
    t.same(new Set(seen.map((a) => a.id)), new Set(expected.map((r) => r.id)), `every ${status} affiliate`);
    checkStrictlyNewestFirst(t, seen);
  }
});

t.test('cursors are tamper-evident and bound to merchant and filters', async (t) => {
  const first = await page(main.client, 'limit=5');
  const cursor = first.body.next_cursor as string;
  t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const ok = await page(main.client, withCursor('limit=5', cursor));
  t.equal(ok.status, 200, 'the untouched cursor works');
  const okOtherLimit = await page(main.client, withCursor('limit=50', cursor));
  t.equal(okOtherLimit.status, 200, 'the limit may change between pages');
  t.same(okOtherLimit.body.data.slice(0, 5), ok.body.data);

  // Flip every character of the payload and of the signature, one at a time, in its lowest and in its highest
  // bit (as a base64url digit). The lowest bit of the last digit is padding: it must not be ignored either.
  const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const dot = cursor.indexOf('.');
  for (let i = 0; i < cursor.length; i++) {
    if (i === dot) continue;
    for (const bit of [1, 32]) {
      const flipped = B64URL[B64URL.indexOf(cursor[i]!) ^ bit]!;
      const tampered = cursor.slice(0, i) + flipped + cursor.slice(i + 1);
      cursorProblem(
        t,
        await page(main.client, withCursor('limit=5', tampered)),
        `${i < dot ? 'payload' : 'signature'} char ${i} flipped (bit ${bit})`,
      );
    }
  }
  const [payload, signature] = cursor.split('.') as [string, string];
  // A payload for a position of the caller's choosing, with the signature of another.
  const forged = Buffer.from(JSON.stringify(['2099-01-01T00:00:00.000Z', 'aff_zzzzzzzzzzzzzzzzzzzzzzzzzz'])).toString(
    'base64url',
  );
  for (const [bad, what] of [
    [`${forged}.${signature}`, 'forged payload'],
    [`${payload}.`, 'no signature'],
    [payload, 'no dot'],
    [`${payload}.${signature}.${signature}`, 'two signatures'],
    [`${payload}.${signature}A`, 'signature with a character added'],
    [`${payload}.${signature.slice(0, -1)}`, 'signature with a character removed'],
    [`${payload}=.${signature}`, 'payload with padding added'],
    ['garbage', 'garbage'],
    ['.', 'a dot'],
  ] as const) {
    cursorProblem(t, await page(main.client, withCursor('limit=5', bad)), what);
  }

  // Another merchant's cursor, although that merchant's list and mine have the same filters.
  const stranger = await platform.merchant();
  await insertRows(stranger.id, 3, new Date(now - HOUR));
  const strangersCursor = (await page(stranger.client, 'limit=1')).body.next_cursor as string;
  t.type(strangersCursor, 'string');
  t.equal((await page(stranger.client, withCursor('limit=1', strangersCursor))).status, 200, 'valid for its merchant');
  cursorProblem(t, await page(main.client, withCursor('limit=1', strangersCursor)), "another merchant's cursor");

  // Reused with other filters.
  const approvedCursor = (await page(main.client, 'status=approved&limit=2')).body.next_cursor as string;
  t.equal(
    (await page(main.client, withCursor('status=approved&limit=2', approvedCursor))).status,
    200,
    'valid with its own filter',
  );
  cursorProblem(
    t,
    await page(main.client, withCursor('status=pending&limit=2', approvedCursor)),
    'status filter changed',
  );
  cursorProblem(t, await page(main.client, withCursor('limit=2', approvedCursor)), 'status filter dropped');
  cursorProblem(t, await page(main.client, withCursor('status=approved&limit=5', cursor)), 'status filter added');

  const empty = await page(main.client, 'cursor=');
  t.equal(empty.status, 400, 'an empty cursor');
  t.equal(empty.body.error.code, 'INVALID_INPUT');
  t.same(
    empty.body.error.details.map((d: { path: string }) => d.path),
    ['cursor'],
  );
});
