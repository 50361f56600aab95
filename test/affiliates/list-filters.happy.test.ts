import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';

// GET /api/v1/affiliates?email=… and ?parent_id=…: what the dashboard's search and lineage read, scoped and paged.
const platform = await startPlatform(t);
const m = await platform.merchant();
const other = await platform.merchant();

const create = async (client: typeof m.client, body: Record<string, unknown>) => {
  const res = await client.post('/api/v1/affiliates', body);
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
  return res.body as { id: string; email: string };
};
const jane = await create(m.client, { email: 'Jane@Example.com' });
const kids = [
  await create(m.client, { email: 'kid1@example.com', parent_email: 'jane@example.com' }),
  await create(m.client, { email: 'kid2@example.com', parent_email: 'jane@example.com' }),
];
await create(m.client, { email: 'grandkid@example.com', parent_email: 'kid1@example.com' });
const theirs = await create(other.client, { email: 'jane@example.com' });

t.test('email: the one affiliate with that e-mail, any case', async (t) => {
  const res = await m.client.get('/api/v1/affiliates?email=JANE%40example.com');
  t.equal(res.status, 200);
  t.same(
    res.body.data.map((a: { id: string }) => a.id),
    [jane.id],
  );
  const none = await m.client.get('/api/v1/affiliates?email=nobody%40example.com');
  t.same(none.body, { data: [], next_cursor: null });
  const bad = await m.client.get('/api/v1/affiliates?email=not-an-email');
  t.equal(bad.status, 400);
  t.match(bad.body.error, { code: 'INVALID_INPUT', details: [{ path: 'email' }] });
});

t.test('parent_id: the direct children only, newest first, paged with a cursor bound to the filter', async (t) => {
  const first = await m.client.get(`/api/v1/affiliates?parent_id=${jane.id}&limit=1`);
  t.equal(first.status, 200);
  t.same(
    first.body.data.map((a: { id: string }) => a.id),
    [kids[1]!.id],
  );
  const second = await m.client.get(
    `/api/v1/affiliates?parent_id=${jane.id}&limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`,
  );
  t.same(
    second.body.data.map((a: { id: string }) => a.id),
    [kids[0]!.id],
  );
  const mixed = await m.client.get(`/api/v1/affiliates?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
  t.equal(mixed.status, 400, 'a cursor of another filter is refused');
});

t.test('another merchant’s affiliates are never matched', async (t) => {
  const byParent = await m.client.get(`/api/v1/affiliates?parent_id=${theirs.id}`);
  t.same(byParent.body.data, []);
  const byEmail = await other.client.get('/api/v1/affiliates?email=jane%40example.com');
  t.same(
    byEmail.body.data.map((a: { id: string }) => a.id),
    [theirs.id],
  );
});
