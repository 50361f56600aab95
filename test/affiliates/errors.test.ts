import t, { type Test } from 'tap';
import { newId } from '@platform/shared/ids';
import type { ApiResponse } from '../helpers/client.ts';
import { expectError, expectInvalid as invalid } from '../helpers/errors.ts';
import { startPlatform } from '../helpers/platform.ts';

/**
 * Every way the affiliates operations refuse input, with the exact error envelope:
 * {error: {code, message, request_id, details?}}, request_id equal to the x-request-id header.
 */
const platform = await startPlatform(t);
const { id: merchantId, client } = await platform.merchant({ plan: 'scale', rateLimit: 60000 });
const other = await platform.merchant();

const notFound = (t: Test, res: ApiResponse) => expectError(t, res, 404, 'NOT_FOUND', 'No such affiliate');

const affiliateCount = async (): Promise<number> => {
  const [row] = await platform.sql<
    { n: number }[]
  >`select count(*)::int as n from affiliates where merchant_id = ${merchantId}`;
  return row!.n;
};

let seq = 0;
/** Creates an affiliate of the main merchant with the given status and returns its id. */
async function affiliate(status: 'pending' | 'approved' | 'suspended' = 'approved'): Promise<string> {
  const res = await client.post('/api/v1/affiliates', { email: `member${++seq}@example.com`, status });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

t.test('create: refused input', async (t) => {
  const before = await affiliateCount();

  invalid(t, await client.post('/api/v1/affiliates', { display_name: 'No Mail' }), [
    { path: 'email', message: 'is required' },
  ]);
  invalid(t, await client.post('/api/v1/affiliates', {}), [{ path: 'email', message: 'is required' }]);
  invalid(t, await client.post('/api/v1/affiliates', { email: 'not-an-email' }), [
    { path: 'email', message: 'must match format "email"' },
  ]);
  invalid(t, await client.post('/api/v1/affiliates', { email: 12 }), [{ path: 'email', message: 'must be string' }]);

  for (const slug of ['Upper', '-lead', 'a', 'has space', 'under_score', 'x'.repeat(64), 'ünï']) {
    invalid(t, await client.post('/api/v1/affiliates', { email: 'slug@example.com', slug }), [
      { path: 'slug', message: 'must match pattern "^[a-z0-9][a-z0-9-]{1,62}$"' },
    ]);
  }

  invalid(t, await client.post('/api/v1/affiliates', { email: 'rate@example.com', custom_commission_rate: 1.5 }), [
    { path: 'custom_commission_rate', message: 'must be <= 1' },
  ]);
  invalid(t, await client.post('/api/v1/affiliates', { email: 'rate@example.com', custom_commission_rate: -0.1 }), [
    { path: 'custom_commission_rate', message: 'must be >= 0' },
  ]);
  invalid(t, await client.post('/api/v1/affiliates', { email: 'rate@example.com', custom_commission_rate: '0.2' }), [
    { path: 'custom_commission_rate', message: 'must be number' },
  ]);

  invalid(t, await client.post('/api/v1/affiliates', { email: 'status@example.com', status: 'nope' }), [
    { path: 'status', message: 'must be one of: "pending", "approved", "rejected", "suspended"' },
  ]);

  invalid(t, await client.post('/api/v1/affiliates', { email: 'typo@example.com', emial: 'typo@example.com' }), [
    { path: 'emial', message: 'is not a known field' },
  ]);

  // Several problems at once: each path reported once.
  invalid(t, await client.post('/api/v1/affiliates', { slug: 'Bad Slug', status: 'nope' }), [
    { path: 'email', message: 'is required' },
    { path: 'slug', message: 'must match pattern "^[a-z0-9][a-z0-9-]{1,62}$"' },
    { path: 'status', message: 'must be one of: "pending", "approved", "rejected", "suspended"' },
  ]);

  t.equal(await affiliateCount(), before, 'nothing was created');
});

t.test('create: parent_email must name an affiliate of this merchant', async (t) => {
  const foreign = await other.client.post('/api/v1/affiliates', { email: 'foreign-parent@example.com' });
  t.equal(foreign.status, 201);
  const before = await affiliateCount();
  const parentProblem = [
    { path: 'parent_email', message: 'must be the e-mail of an existing affiliate of this merchant' },
  ];

  invalid(
    t,
    await client.post('/api/v1/affiliates', { email: 'orphan@example.com', parent_email: 'nobody@example.com' }),
    parentProblem,
  );
  // Exists, but only for another merchant: no different from not existing at all.
  invalid(
    t,
    await client.post('/api/v1/affiliates', {
      email: 'orphan@example.com',
      parent_email: 'foreign-parent@example.com',
    }),
    parentProblem,
  );
  invalid(t, await client.post('/api/v1/affiliates', { email: 'orphan@example.com', parent_email: 'not an email' }), [
    { path: 'parent_email', message: 'must match format "email"' },
  ]);
  t.equal(await affiliateCount(), before, 'nothing was created');

  // The positive case, matched case-insensitively.
  const parent = await client.post('/api/v1/affiliates', { email: 'Real.Parent@Example.com' });
  const child = await client.post('/api/v1/affiliates', {
    email: 'real-child@example.com',
    parent_email: 'real.parent@EXAMPLE.com',
  });
  t.equal(child.status, 201);
  t.equal(child.body.parent_id, parent.body.id);
});

t.test('create: duplicates are CONFLICT', async (t) => {
  const first = await client.post('/api/v1/affiliates', { email: 'A@x.com', slug: 'first-dup' });
  t.equal(first.status, 201);
  const before = await affiliateCount();

  expectError(
    t,
    await client.post('/api/v1/affiliates', { email: 'a@X.com' }),
    409,
    'CONFLICT',
    'An affiliate with this e-mail already exists',
    [{ path: 'email', message: 'is already taken' }],
  );
  expectError(
    t,
    await client.post('/api/v1/affiliates', { email: 'A@x.com', slug: 'other-slug' }),
    409,
    'CONFLICT',
    'An affiliate with this e-mail already exists',
    [{ path: 'email', message: 'is already taken' }],
  );
  expectError(
    t,
    await client.post('/api/v1/affiliates', { email: 'b@x.com', slug: 'first-dup' }),
    409,
    'CONFLICT',
    'An affiliate with this slug already exists',
    [{ path: 'slug', message: 'is already taken' }],
  );
  t.equal(await affiliateCount(), before, 'no duplicate was stored');

  // Uniqueness is per merchant: another merchant may use the same e-mail and slug.
  const elsewhere = await other.client.post('/api/v1/affiliates', { email: 'a@x.com', slug: 'first-dup' });
  t.equal(elsewhere.status, 201);
});

t.test('create: generated slugs collide gracefully', async (t) => {
  const a = await client.post('/api/v1/affiliates', { email: 'sam@a.com' });
  const b = await client.post('/api/v1/affiliates', { email: 'sam@b.com' });
  t.equal(a.status, 201);
  t.equal(b.status, 201);
  t.equal(a.body.slug, 'sam');
  t.match(b.body.slug, /^sam-[a-z0-9-]+$/);
  t.not(a.body.slug, b.body.slug);

  // An explicit slug that a generated one already holds is a conflict; a generated slug never is.
  expectError(
    t,
    await client.post('/api/v1/affiliates', { email: 'sam@c.com', slug: 'sam' }),
    409,
    'CONFLICT',
    'An affiliate with this slug already exists',
    [{ path: 'slug', message: 'is already taken' }],
  );

  // Created at the same moment, each still gets a slug of its own: the caller gave none, so none can conflict.
  const together = await Promise.all(
    ['d', 'e', 'f', 'g', 'h', 'i'].map((d) => client.post('/api/v1/affiliates', { email: `kim@${d}.com` })),
  );
  t.same(
    together.map((r) => r.status),
    [201, 201, 201, 201, 201, 201],
    together.map((r) => r.text).join('\n'),
  );
  const slugs = together.map((r) => r.body.slug as string);
  t.equal(new Set(slugs).size, slugs.length, `distinct slugs: ${slugs.join(', ')}`);
  for (const s of slugs) t.match(s, /^kim(-[a-z0-9]+)?$/);
});

t.test('PATCH: status moves of decisions §5', async (t) => {
  const allowed: [from: 'pending' | 'approved' | 'suspended', to: 'approved' | 'rejected' | 'suspended'][] = [
    ['pending', 'approved'],
    ['pending', 'rejected'],
    ['pending', 'suspended'],
    ['approved', 'suspended'],
    ['suspended', 'approved'],
  ];
  for (const [from, to] of allowed) {
    const id = await affiliate(from);
    const res = await client.patch(`/api/v1/affiliates/${id}`, { status: to });
    t.equal(res.status, 200, `${from} → ${to}`);
    t.equal(res.body.status, to);
    t.equal((await client.get(`/api/v1/affiliates/${id}`)).body.status, to, 'stored');
  }

  // Staying put is not a move: accepted, nothing changes.
  const stay = await affiliate('approved');
  const same = await client.patch(`/api/v1/affiliates/${stay}`, { status: 'approved' });
  t.equal(same.status, 200);
  t.equal(same.body.status, 'approved');

  for (const from of ['approved', 'suspended'] as const) {
    const id = await affiliate(from);
    const message = `A${from === 'approved' ? 'n' : ''} ${from} affiliate cannot move to pending; allowed moves from ${from}: ${from === 'approved' ? 'suspended' : 'approved'}`;
    expectError(t, await client.patch(`/api/v1/affiliates/${id}`, { status: 'pending' }), 409, 'CONFLICT', message);
    // A refused move changes nothing, not even the other fields of the same request.
    expectError(
      t,
      await client.patch(`/api/v1/affiliates/${id}`, { status: 'pending', display_name: 'Renamed' }),
      409,
      'CONFLICT',
      message,
    );
    const stored = await client.get(`/api/v1/affiliates/${id}`);
    t.equal(stored.body.status, from, `${from} stays ${from}`);
    t.not(stored.body.display_name, 'Renamed');
  }

  const id = await affiliate('approved');
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { status: 'nope' }), [
    { path: 'status', message: 'must be one of: "pending", "approved", "rejected", "suspended"' },
  ]);
});

t.test('PATCH: refused bodies', async (t) => {
  const id = await affiliate();
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, {}), [
    { path: 'body', message: 'must name at least one field' },
  ]);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`), [
    { path: 'body', message: 'must name at least one field' },
  ]);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { nickname: 'x' }), [
    { path: 'nickname', message: 'is not a known field' },
  ]);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { status: 'approved', email: 'new@example.com' }), [
    { path: 'email', message: 'is not a known field' },
  ]);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { display_name: '' }), [
    { path: 'display_name', message: 'must NOT have fewer than 1 characters' },
  ]);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { custom_commission_rate: 1.5 }), [
    { path: 'custom_commission_rate', message: 'must be <= 1' },
  ]);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { custom_commission_rate: -0.1 }), [
    { path: 'custom_commission_rate', message: 'must be >= 0' },
  ]);
  // The input check comes before the row check: an invalid body on an unknown id is 400, not 404.
  invalid(t, await client.patch(`/api/v1/affiliates/${newId('aff')}`, {}), [
    { path: 'body', message: 'must name at least one field' },
  ]);

  const stored = await client.get(`/api/v1/affiliates/${id}`);
  t.equal(stored.body.status, 'approved');
  t.equal(stored.body.custom_commission_rate, null);
});

t.test('PATCH: tier_id must be a tier of this merchant', async (t) => {
  const id = await affiliate();
  const mine = newId('tier');
  const theirs = newId('tier');
  await platform.sql`insert into tiers (id, merchant_id, name, rate, threshold) values
    (${mine}, ${merchantId}, 'Gold', 0.25, 1000), (${theirs}, ${other.id}, 'Other gold', 0.3, 500)`;
  const tierProblem = [{ path: 'tier_id', message: 'is not a tier of this merchant' }];

  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { tier_id: theirs }), tierProblem);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { tier_id: newId('tier') }), tierProblem);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { tier_id: 'gold' }), tierProblem);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { tier_id: '' }), tierProblem);
  invalid(t, await client.patch(`/api/v1/affiliates/${id}`, { tier_id: 7 }), [
    { path: 'tier_id', message: 'must be string' },
  ]);
  t.equal((await client.get(`/api/v1/affiliates/${id}`)).body.tier_id, null, 'no tier was set');

  const set = await client.patch(`/api/v1/affiliates/${id}`, { tier_id: mine });
  t.equal(set.status, 200);
  t.equal(set.body.tier_id, mine);
  t.equal((await client.get(`/api/v1/affiliates/${id}`)).body.tier_id, mine);

  const cleared = await client.patch(`/api/v1/affiliates/${id}`, { tier_id: null });
  t.equal(cleared.status, 200);
  t.equal(cleared.body.tier_id, null);
});

t.test('PATCH and GET: unknown or malformed affiliate ids are NOT_FOUND', async (t) => {
  const ids = [
    newId('aff'), // well-formed, no such row
    newId('tier'), // another kind of id
    'aff_123', // malformed
    'nonsense',
    'aff_' + 'Z'.repeat(26),
    encodeURIComponent("aff_' or 1=1 --"),
  ];
  for (const id of ids) {
    notFound(t, await client.patch(`/api/v1/affiliates/${id}`, { status: 'suspended' }));
    notFound(t, await client.get(`/api/v1/affiliates/${id}`));
  }
});
