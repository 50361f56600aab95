import t from 'tap';
import { sessionRequest } from '../helpers/dashboard.ts';
import { application, apply, programmeMerchant, startProgrammePlatform, teamMember } from './programme.ts';

// Isolation and escaping: another merchant cannot read or change a programme page's settings, see its
// applications or decide them (404, as for any affiliate not its own); roles below admin read but do not change;
// the page escapes what the merchant typed and runs under the strict page policy; a recruit link cannot name
// another merchant's affiliate.
const platform = await startProgrammePlatform(t);
const a = await programmeMerchant(
  platform,
  { slug: 'sec-alpha', description: '<script>alert("x")</script> & <img src=x onerror=alert(1)>' },
  'Alpha <b>Shop</b>',
);
const b = await programmeMerchant(platform, { slug: 'sec-beta' }, 'Beta Shop');
await apply(platform, 'sec-alpha', application('applicant@alpha.example'));
const [applicant] = await platform.sql`select id from affiliates where merchant_id = ${a.id}
  and email = 'applicant@alpha.example'`;
const applicantId = applicant!['id'] as string;

t.test('another merchant sees and changes only its own programme page and applications', async (t) => {
  const page = await b.dash('GET', '/dashboard/api/programme');
  t.equal(page.body.slug, 'sec-beta');
  const steal = await b.dash('PATCH', '/dashboard/api/programme', { slug: 'sec-alpha', auto_approve: true });
  t.equal(steal.status, 409, "A's slug is taken, not A's page changed");
  const [alpha] = await platform.sql`select auto_approve, merchant_id from programmes where slug = 'sec-alpha'`;
  t.match(alpha, { auto_approve: false, merchant_id: a.id });
  t.same((await b.dash('GET', '/dashboard/api/applications')).body.data, [], "B lists none of A's applications");
  t.equal((await a.dash('GET', '/dashboard/api/applications')).body.data.length, 1);
});

t.test("another merchant cannot approve or reject A's applicant: 404", async (t) => {
  for (const status of ['approved', 'rejected']) {
    const byKey = await b.client.patch(`/api/v1/affiliates/${applicantId}`, { status });
    t.equal(byKey.status, 404, `${status} by key`);
    const bySession = await b.dash('PATCH', `/api/v1/affiliates/${applicantId}`, { status });
    t.equal(bySession.status, 404, `${status} by dashboard session`);
  }
  const [row] = await platform.sql`select status from affiliates where id = ${applicantId}`;
  t.equal(row!['status'], 'pending');
  const mails = await platform.sql`select kind from mails where recipient = 'applicant@alpha.example'`;
  t.same(
    mails.map((m) => m['kind']),
    ['application_received'],
  );
});

t.test('developers and viewers read the page settings but cannot change them or decide', async (t) => {
  for (const role of ['developer', 'viewer'] as const) {
    const as = await teamMember(platform, a.id, role);
    t.equal((await as('GET', '/dashboard/api/programme')).status, 200, `${role} reads`);
    t.equal((await as('GET', '/dashboard/api/applications')).status, 200, `${role} lists`);
    const change = await as('PATCH', '/dashboard/api/programme', { slug: 'sec-alpha', auto_approve: true });
    t.equal(change.status, 403, `${role} cannot change`);
    const decide = await as('PATCH', `/api/v1/affiliates/${applicantId}`, { status: 'approved' });
    t.equal(decide.status, 403, `${role} cannot approve`);
  }
  const admin = await teamMember(platform, a.id, 'admin');
  t.equal((await admin('PATCH', '/dashboard/api/programme', { slug: 'sec-alpha' })).status, 200, 'admin changes');
  const anonymous = await sessionRequest(platform.baseUrl, {}, 'GET', '/dashboard/api/programme');
  t.equal(anonymous.status, 401);
});

t.test('the page escapes the description and name, under the strict page policy', async (t) => {
  const res = await fetch(`${platform.baseUrl}/p/sec-alpha`);
  const html = await res.text();
  t.notMatch(html, /<script>/);
  t.notMatch(html, /<img src=x/);
  t.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &lt;img src=x onerror=alert\(1\)&gt;/);
  t.match(html, /Alpha &lt;b&gt;Shop&lt;\/b&gt; affiliate programme/);
  const csp = res.headers.get('content-security-policy')!;
  t.match(csp, /default-src 'none'/);
  t.match(csp, /frame-ancestors 'none'/);
  t.notMatch(csp, /unsafe-inline/);
  t.equal(res.headers.get('cache-control'), 'no-store');
  const ref = await (await fetch(`${platform.baseUrl}/p/sec-alpha?ref=%22%3E%3Cscript%3E`)).text();
  t.notMatch(ref, /"><script>/, 'the ref is escaped too');
  const js = await a.dash('PATCH', '/dashboard/api/programme', {
    slug: 'sec-alpha',
    terms_url: 'javascript:alert(1)',
  });
  t.equal(js.status, 400, 'a terms link must be http(s)');
});

t.test("a recruit link cannot name another merchant's affiliate as the parent", async (t) => {
  await b.client.post('/api/v1/affiliates', { email: 'lead@beta.example', slug: 'beta-lead' });
  await apply(platform, 'sec-alpha', application('recruit@alpha.example', { ref: 'beta-lead' }));
  const [row] = await platform.sql`select parent_id from affiliates where merchant_id = ${a.id}
    and email = 'recruit@alpha.example'`;
  t.equal(row!['parent_id'], null);
});

t.test('posting one known address again and again does not lock its e-mail domain out', async (t) => {
  // The review's finding: 30 posts of one address from 3 client addresses used up gmail.com's hour for everyone.
  await programmeMerchant(platform, { slug: 'sec-domain' }, 'Domain Shop');
  const statuses = new Set<number>();
  for (let i = 0; i < 30; i++)
    statuses.add(
      (await apply(platform, 'sec-domain', application('attacker@gmail.com'), `203.0.113.${1 + (i % 3)}`)).status,
    );
  t.same([...statuses], [200], 'each answered alike');
  const others = await Promise.all(
    [1, 2, 3].map((i) => apply(platform, 'sec-domain', application(`real.person${i}@gmail.com`), `192.0.2.${70 + i}`)),
  );
  t.same(
    others.map((r) => r.status),
    [200, 200, 200],
    'other gmail.com applicants from other clients still apply',
  );
  const made = await platform.sql`select email from affiliates a join programmes p on p.merchant_id = a.merchant_id
    where p.slug = 'sec-domain' order by email`;
  t.same(
    made.map((r) => r['email']),
    ['attacker@gmail.com', 'real.person1@gmail.com', 'real.person2@gmail.com', 'real.person3@gmail.com'],
  );
});

t.test(
  'one client makes at most 5 affiliates of one e-mail domain an hour; others from the domain go on',
  async (t) => {
    await programmeMerchant(platform, { slug: 'sec-share' }, 'Share Shop');
    const ip = '203.0.113.50';
    for (let i = 0; i < 5; i++)
      t.equal((await apply(platform, 'sec-share', application(`bulk${i}@big-mail.example`), ip)).status, 200);
    const refused = await apply(platform, 'sec-share', application('bulk5@big-mail.example'), ip);
    t.equal(refused.status, 429, "the client's share of the domain is used up");
    t.ok(Number(refused.headers.get('retry-after')) > 3000, 'Retry-After: most of the hour');
    t.equal((await apply(platform, 'sec-share', application('other@else.example'), ip)).status, 200, 'another domain');
    t.equal(
      (await apply(platform, 'sec-share', application('bulk5@big-mail.example'), '203.0.113.51')).status,
      200,
      'the same domain from another client',
    );
  },
);

t.test('the name cannot carry lines or control characters into the mails', async (t) => {
  await programmeMerchant(platform, { slug: 'sec-mail', auto_approve: true }, 'Mail Shop');
  const name = 'Jane.\n\nSECURITY ALERT: your account was suspended, verify at https://evil.example/login now';
  for (const [label, typed] of [
    ['line feeds', name],
    ['carriage returns', name.replace(/\n/g, '\r')],
    ['a line separator', 'Jane\u2028Alert'],
    ['NUL', 'Jane\u0000'],
    ['an escape sequence', 'Jane\u001b[2J'],
  ] as const) {
    const res = await apply(platform, 'sec-mail', application('victim@mail.example', { name: typed }));
    t.equal(res.status, 400, label);
    t.match(res.text, /<p class="error" id="name-error">[^<]*one line/);
  }
  const made = await platform.sql`select 1 from affiliates where email = 'victim@mail.example'`;
  t.equal(made.length, 0, 'no affiliate');
  const mails = await platform.sql`select 1 from mails where recipient = 'victim@mail.example'`;
  t.equal(mails.length, 0, 'no mail');
});
