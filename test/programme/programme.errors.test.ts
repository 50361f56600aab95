import t from 'tap';
import { application, apply, freshIp, mailsTo, programmeMerchant, startProgrammePlatform } from './programme.ts';

// The programme page's refusals: bad input answers the form again with each problem (never a 500), an unknown
// page is a 404 page, the limits per client address and per e-mail domain answer a 429 page, and an address that
// is already an affiliate gets the same answer as a new one but no second affiliate and no mail.
const platform = await startProgrammePlatform(t);
const m = await programmeMerchant(platform, { slug: 'errors-shop' }, 'Errors Shop');
const count = async (email?: string) =>
  (
    await platform.sql`select count(*)::int as n from affiliates
      where merchant_id = ${m.id} ${email ? platform.sql`and lower(email) = lower(${email})` : platform.sql``}`
  )[0]!['n'] as number;

t.test('bad input answers the form again, filled in, with what is wrong; nothing is made', async (t) => {
  const before = await count();
  for (const [over, field] of [
    [{ name: '  ' }, 'name'],
    [{ email: 'not-an-address' }, 'email'],
    [{ website: 'not a web address' }, 'website'],
    [{ website: 'ftp://files.example.com' }, 'website'],
    [{ promotion: '' }, 'promotion'],
    [{ terms: '' }, 'terms'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 'Jane\nApplicant' }, 'name'],
    [{ email: 'a@b.c\u0000' }, 'email'],
    [{ email: 'a\u0007b@input.example' }, 'email'],
    [{ email: 'ab@input.example\u0085' }, 'email'],
    [{ promotion: 'x'.repeat(2001) }, 'promotion'],
    [{ promotion: 'A newsletter\u0000' }, 'promotion'],
  ] as const) {
    const res = await apply(platform, 'errors-shop', application('bad@input.example', over));
    t.equal(res.status, 400, JSON.stringify(over).slice(0, 60));
    t.match(res.text, new RegExp(`<p class="error" id="${field}-error">`), `${field} is named`);
    t.match(res.text, /<button type="submit">Apply<\/button>/, 'the form again');
  }
  const refill = await apply(
    platform,
    'errors-shop',
    application('bad@input.example', { name: '<b>Jane</b>', terms: '' }),
  );
  t.match(refill.text, /value="&lt;b&gt;Jane&lt;\/b&gt;"/, 'filled in again, escaped');
  const nothing = await fetch(`${platform.baseUrl}/p/errors-shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': freshIp() },
    body: '',
  });
  t.equal(nothing.status, 400, 'an empty body');
  const json = await fetch(`${platform.baseUrl}/p/errors-shop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp() },
    body: JSON.stringify(application('json@input.example')),
  });
  t.equal(json.status, 400, 'JSON is not the form');
  t.equal(await count(), before);
});

t.test('an unknown or malformed programme address answers a 404 page', async (t) => {
  for (const path of ['/p/no-such-shop', '/p/UPPER', '/p/a', `/p/${'x'.repeat(80)}`]) {
    const get = await fetch(`${platform.baseUrl}${path}`);
    t.equal(get.status, 404, path);
    t.match(await get.text(), /Programme not found/);
    t.equal(get.headers.get('content-type'), 'text/html; charset=utf-8');
  }
  const post = await apply(platform, 'no-such-shop', application('lost@input.example'));
  t.equal(post.status, 404);
  t.match(post.text, /Programme not found/);
});

t.test('an address already an affiliate gets the same answer, and no second affiliate or mail', async (t) => {
  const first = await apply(platform, 'errors-shop', application('twice@dup.example'));
  const second = await apply(platform, 'errors-shop', application('TWICE@dup.example', { name: 'Someone Else' }));
  t.equal(first.status, 200);
  t.equal(second.status, 200);
  t.equal(
    second.text.replace(/nonce-[^']+'|nonce="[^"]+"/g, ''),
    first.text.replace(/nonce-[^']+'|nonce="[^"]+"/g, ''),
  );
  t.equal(await count('twice@dup.example'), 1);
  await m.client.post('/api/v1/affiliates', { email: 'known@dup.example' });
  const known = await apply(platform, 'errors-shop', application('known@dup.example'));
  t.equal(known.status, 200);
  t.equal(await count('known@dup.example'), 1);
  await mailsTo(platform, 'twice@dup.example');
  const mails =
    await platform.sql`select recipient from mails where lower(recipient) in ('twice@dup.example', 'known@dup.example')`;
  t.equal(mails.length, 1, 'one mail, for the first application only');
  // At once from two browsers: one affiliate, both answered alike.
  const racing = await Promise.all(
    [1, 2, 3].map(() => apply(platform, 'errors-shop', application('race@dup.example'))),
  );
  t.same(
    racing.map((r) => r.status),
    [200, 200, 200],
  );
  t.equal(await count('race@dup.example'), 1);
});

t.test('one client address may apply 10 times an hour; the 11th gets a 429 page', async (t) => {
  const ip = '203.0.113.9';
  for (let i = 0; i < 10; i++)
    t.equal((await apply(platform, 'errors-shop', application(`ip${i}@d${i}.example`), ip)).status, 200);
  const before = await count();
  const refused = await apply(platform, 'errors-shop', application('ip10@d10.example'), ip);
  t.equal(refused.status, 429);
  t.match(refused.text, /Too many applications/);
  t.ok(Number(refused.headers.get('retry-after')) > 3000, 'Retry-After: most of the hour');
  t.equal(await count(), before, 'nothing made');
  t.equal((await apply(platform, 'errors-shop', application('ip10@d10.example'))).status, 200, 'another address');
});

t.test('one e-mail domain may make 100 affiliates an hour of a programme, from any address', async (t) => {
  // Each from a client of its own: one client's share of a domain is 5 (programme.security.test.ts).
  for (let i = 0; i < 100; i++)
    t.equal(
      (await apply(platform, 'errors-shop', application(`u${i}@ONE-domain.example`), `192.0.2.${i + 1}`)).status,
      200,
    );
  const refused = await apply(platform, 'errors-shop', application('u100@one-domain.example'), '192.0.2.200');
  t.equal(refused.status, 429);
  t.match(refused.text, /Too many applications/);
  t.equal(
    (await apply(platform, 'errors-shop', application('u1@one-domain.example'), '192.0.2.201')).status,
    429,
    'a known address is refused alike: the answer tells nothing',
  );
  await programmeMerchant(platform, { slug: 'other-shop' });
  t.equal(
    (await apply(platform, 'other-shop', application('u30@one-domain.example'))).status,
    200,
    'another programme',
  );
});

t.test('the page settings refuse a bad slug, a taken one, a bad terms URL and bad frame origins', async (t) => {
  for (const [body, path] of [
    [{ slug: 'Has Spaces' }, 'slug'],
    [{ slug: 'x' }, 'slug'],
    [{ slug: 'ok-slug', terms_url: 'ftp://terms.example.com' }, 'terms_url'],
    [{ slug: 'ok-slug', terms_url: 'https://' }, 'terms_url'],
    [{ slug: 'ok-slug', terms_url: 'https://terms.example.com/a b' }, 'terms_url'],
    [{ slug: 'ok-slug', frame_origins: ['https://app.example.com/path'] }, 'frame_origins.0'],
    [{ slug: 'ok-slug', frame_origins: ['http://app.example.com'] }, 'frame_origins.0'],
    [{ slug: 'ok-slug', frame_origins: ['https://*.example.com'] }, 'frame_origins.0'],
    [
      { slug: 'ok-slug', frame_origins: Array.from({ length: 11 }, (_, i) => `https://a${i}.example.com`) },
      'frame_origins',
    ],
    [{ slug: 'ok-slug', description: 'x'.repeat(4001) }, 'description'],
  ] as const) {
    const res = await m.dash('PATCH', '/dashboard/api/programme', body);
    t.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
    t.match(res.body, { error: { code: 'INVALID_INPUT', details: [{ path: new RegExp(path.replace('.', '\\.')) }] } });
  }
  const taken = await m.dash('PATCH', '/dashboard/api/programme', { slug: 'other-shop' });
  t.equal(taken.status, 409);
  t.match(taken.body, { error: { code: 'CONFLICT', details: [{ path: 'slug' }] } });
  const kept = await m.dash('GET', '/dashboard/api/programme');
  t.equal(kept.body.slug, 'errors-shop', 'unchanged');
  const ok = await m.dash('PATCH', '/dashboard/api/programme', {
    slug: 'errors-shop',
    frame_origins: ['https://App.Example.com:8443', 'https://app.example.com:8443/'],
  });
  t.same(ok.body.frame_origins, ['https://app.example.com:8443'], 'normalised, once');
});

t.test('the status moves of an application: only a pending affiliate is rejected', async (t) => {
  const made = await m.client.post('/api/v1/affiliates', { email: 'moves@status.example' });
  const res = await m.client.patch(`/api/v1/affiliates/${made.body.id}`, { status: 'rejected' });
  t.equal(res.status, 409);
  t.match(res.body.error.message, /approved affiliate cannot move to rejected/);
});
