import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';

const platform = await startPlatform(t);
const { client } = await platform.merchant();

t.test('create, get and list an affiliate with a parent', async (t) => {
  const parent = await client.post('/api/v1/affiliates', { email: 'Lead@Example.com', display_name: 'Lead' });
  t.equal(parent.status, 201);
  t.match(parent.body, {
    id: /^aff_/,
    slug: 'lead',
    email: 'Lead@Example.com',
    display_name: 'Lead',
    status: 'approved',
    tier_id: null,
    parent_id: null,
    lifetime_commissions_paid: 0,
    custom_commission_rate: null,
  });
  const child = await client.post('/api/v1/affiliates', {
    email: 'kid@example.com',
    parent_email: 'lead@example.com',
    status: 'pending',
    custom_commission_rate: 0.2,
    slug: 'the-kid',
  });
  t.equal(child.status, 201);
  t.equal(child.body.parent_id, parent.body.id);
  t.equal(child.body.custom_commission_rate, 0.2);
  t.equal(child.body.slug, 'the-kid');
  t.equal(child.body.display_name, 'Kid');

  const got = await client.get(`/api/v1/affiliates/${child.body.id}`);
  t.equal(got.status, 200);
  t.same(got.body, child.body);

  const list = await client.get('/api/v1/affiliates');
  t.equal(list.status, 200);
  t.same(
    list.body.data.map((a: { id: string }) => a.id),
    [child.body.id, parent.body.id],
  );
  t.equal(list.body.next_cursor, null);

  const pending = await client.get('/api/v1/affiliates?status=pending');
  t.same(
    pending.body.data.map((a: { id: string }) => a.id),
    [child.body.id],
  );
});
