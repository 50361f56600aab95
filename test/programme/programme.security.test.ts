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
