import t from 'tap';
import { approvedAffiliate, createPortalSession, openLink, portal, startPortalPlatform } from './backend.ts';

/** POST /api/v1/affiliates/{id}/portal_sessions: the merchant's app signs its affiliate into the embedded portal. */
t.test('a portal session URL signs the affiliate in once', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant({ name: 'Acme' });
  await platform.sql`
    insert into programmes (merchant_id, slug, frame_origins) values (${m.id}, 'acme', '{https://app.acme.example}')`;
  const a = await approvedAffiliate(m);

  const before = Date.now();
  const made = await createPortalSession(m, a.id, { return_url: 'https://app.acme.example/partners?tab=1' });
  t.equal(made.status, 201);
  t.same(Object.keys(made.body).sort(), ['expires_at', 'object', 'url']);
  t.equal(made.body.object, 'portal_session');
  t.match(made.body.url, /^https:\/\/portal\.test\/portal\/link\/[A-Za-z0-9_-]{43}$/);
  const lifetime = Date.parse(made.body.expires_at) - before;
  t.ok(lifetime > 4.5 * 60_000 && lifetime <= 5 * 60_000 + 5_000, `5 minutes (${lifetime} ms)`);
  const [stored] = await platform.sql<{ token_hash: Buffer }[]>`select token_hash from portal_links`;
  t.notOk(made.body.url.includes(stored!.token_hash.toString('hex')), 'only its hash is stored');

  const opened = await openLink(base, made.body.url);
  t.equal(opened.status, 303);
  t.equal(opened.location, '/portal/');
  const session = await portal(base, { cookie: opened.cookie! }, 'GET', '/portal/api/session');
  t.match(session.body, {
    email: a.email,
    embedded: true,
    return_url: 'https://app.acme.example/partners?tab=1',
    affiliate: { id: a.id },
    programme: { merchant_name: 'Acme', slug: 'acme' },
    programmes: [],
  });
  t.equal((await openLink(base, made.body.url)).status, 410, 'single use');

  const plain = await createPortalSession(m, a.id);
  t.equal(plain.status, 201, 'return_url is optional');
  const s = await openLink(base, plain.body.url);
  const view = await portal(base, { cookie: s.cookie! }, 'GET', '/portal/api/session');
  t.equal(view.body.return_url, null);
});

t.test('the operation is in the OpenAPI document with an example', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const doc = (await (await fetch(`${platform.baseUrl}/api/v1/openapi`)).json()) as any;
  const op = doc.paths['/api/v1/affiliates/{affiliate_id}/portal_sessions']?.post;
  t.ok(op, 'listed');
  t.equal(op.operationId, 'createPortalSession');
  t.equal(op.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/PortalSession');
  t.match(doc.components.schemas.PortalSession.examples, [{ object: 'portal_session' }], 'an example answer');
  t.match(doc.components.schemas.CreatePortalSession.examples, [{ return_url: /^https:/ }], 'an example body');
});
