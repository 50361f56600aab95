import t from 'tap';
import { approvedAffiliate, createPortalSession, openLink, startPortalPlatform } from './backend.ts';

t.test('portal sessions: what the API refuses', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant();
  const other = await platform.merchant();
  await platform.sql`
    insert into programmes (merchant_id, slug, frame_origins) values (${m.id}, 'acme', '{https://app.acme.example}')`;
  await platform.sql`
    insert into programmes (merchant_id, slug, frame_origins) values (${other.id}, 'other', '{https://evil.example}')`;
  const a = await approvedAffiliate(m);
  const theirs = await approvedAffiliate(other);

  for (const id of [theirs.id, 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c', 'nonsense']) {
    const res = await createPortalSession(m, id);
    t.equal(res.status, 404, `affiliate ${id}`);
    t.equal(res.body.error.code, 'NOT_FOUND');
  }

  for (const url of [
    'https://evil.example/x',
    'https://app.acme.example.evil.example/',
    'http://app.acme.example/',
    'https://app.acme.example:444/',
    'javascript:alert(1)',
    'not a url',
  ]) {
    const res = await createPortalSession(m, a.id, { return_url: url });
    t.equal(res.status, 400, url);
    t.match(res.body.error.details, [{ path: 'return_url' }], `${url} names return_url`);
  }
  t.equal((await createPortalSession(m, a.id, { return_url: 'https://app.acme.example/ok' })).status, 201);
  t.equal((await createPortalSession(m, a.id, { other: 1 })).status, 400, 'unknown fields');
  t.equal(
    (await createPortalSession(m, a.id, { return_url: `https://app.acme.example/${'a'.repeat(2100)}` })).status,
    400,
    'bounded',
  );

  const pending = await m.client.post('/api/v1/affiliates', {
    email: `p-${Date.now()}@example.com`,
    status: 'pending',
  });
  const refused = await createPortalSession(m, pending.body.id);
  t.equal(refused.status, 409, 'only approved affiliates sign in');
  t.equal(refused.body.error.code, 'CONFLICT');

  const reader = await platform.merchant({ scopes: 'read' });
  const readerAff = await approvedAffiliate(m);
  const readOnly = await reader.client.post(`/api/v1/affiliates/${readerAff.id}/portal_sessions`, {});
  t.equal(readOnly.status, 403, 'the write scope is needed');

  const free = await platform.merchant({ plan: 'free' });
  const gated = await free.client.post(`/api/v1/affiliates/${a.id}/portal_sessions`, {});
  t.not(gated.status, 201, 'plan gated as every route');

  const made = await createPortalSession(m, a.id);
  await platform.sql`update portal_links set expires_at = now() - interval '1 second' where purpose = 'embed'`;
  t.equal((await openLink(base, made.body.url)).status, 410, 'after 5 minutes it opens nothing');

  const late = await createPortalSession(m, a.id);
  t.equal((await m.client.patch(`/api/v1/affiliates/${a.id}`, { status: 'suspended' })).status, 200);
  t.equal((await openLink(base, late.body.url)).status, 410, 'an affiliate suspended since is not signed in');
});
