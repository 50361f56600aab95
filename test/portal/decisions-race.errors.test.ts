import t from 'tap';
import { mailsTo, waitForMails } from '../helpers/invitations.ts';
import { sleep } from '../helpers/platform.ts';
import { approvedAffiliate, newestPortalLink, portal, sessionOf, signIn, startPortalPlatform } from './backend.ts';

/**
 * The portal's writes that decide who earns and where money goes, run twice, at once, and retried: an application
 * approved by two requests at once (or approved again after a timeout) is approved once, with one event and one
 * mail; two changes of payout details at once are both audited, in order, each mailed, and the details on file are
 * the last one's.
 */
const { platform } = await startPortalPlatform(t);
const base = platform.baseUrl;
const m = await platform.merchant({ name: 'Acme' });

const approvedEvents = async (affiliateId: string) =>
  (
    await platform.sql<{ n: number }[]>`
      select count(*)::int as n from outbox
      where merchant_id = ${m.id} and type = 'affiliate.approved' and data->>'id' = ${affiliateId}`
  )[0]!.n;

t.test('an application approved by two requests at once, then again as a retry: approved once', async (t) => {
  const email = `applicant-${Date.now()}@example.com`;
  const created = await m.client.post('/api/v1/affiliates', { email, status: 'pending' });
  t.match(created, { status: 201, body: { status: 'pending' } });
  const id = created.body.id as string;
  const both = await Promise.all([
    m.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' }),
    m.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' }),
  ]);
  t.same(
    both.map((r) => r.status),
    [200, 200],
    'both answer the approved affiliate',
  );
  // The retry of a request whose answer was lost: the same body again.
  t.equal((await m.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' })).status, 200);
  t.equal(await approvedEvents(id), 1, 'one affiliate.approved');
  await waitForMails(base, email, 1);
  await sleep(500); // time for a second mail, were one written
  const approvals = (await mailsTo(base, email)).filter((x) => /^Welcome to/.test(x.subject));
  t.equal(approvals.length, 1, 'one approval mail, one sign-in link');
  const [links] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from portal_links where merchant_id = ${m.id} and affiliate_id = ${id}`;
  t.equal(links!.n, 1);
});

t.test('approve and reject at once: one decision wins, the other is refused', async (t) => {
  const email = `decided-${Date.now()}@example.com`;
  const id = (await m.client.post('/api/v1/affiliates', { email, status: 'pending' })).body.id as string;
  const [approve, reject] = await Promise.all([
    m.client.patch(`/api/v1/affiliates/${id}`, { status: 'approved' }),
    m.client.patch(`/api/v1/affiliates/${id}`, { status: 'rejected' }),
  ]);
  t.same(
    [approve.status, reject.status].sort(),
    [200, 409],
    'one move is made, the other is refused from the state it left',
  );
  const final = (await m.client.get(`/api/v1/affiliates/${id}`)).body.status as string;
  t.equal(await approvedEvents(id), final === 'approved' ? 1 : 0, 'an event only for an approval that stood');
});

t.test('two changes of payout details at once: both audited in order, each mailed, the last on file', async (t) => {
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  await portal(base, s, 'POST', '/portal/api/payout-settings/link', {});
  const fresh = await sessionOf(base, (await newestPortalLink(base, a.email, 2)).url);
  const bodies = [
    { method: 'paypal', paypal_email: 'first.choice@example.com' },
    { method: 'bank', iban: 'DE89370400440532013000' },
  ];
  const puts = await Promise.all(bodies.map((b) => portal(base, fresh, 'PUT', '/portal/api/payout-details', b)));
  t.same(
    puts.map((r) => r.status),
    [200, 200],
  );
  const history = (await m.client.get(`/api/v1/affiliates/${a.id}/payout_details/history`)).body.data as any[];
  t.equal(history.length, 2, 'both audited');
  const [newest, older] = history;
  t.equal(newest.before?.method, older.after.method, 'in order: each change saw the one before it');
  const onFile = (await m.client.get(`/api/v1/affiliates/${a.id}/payout_details`)).body;
  t.equal(onFile.method, newest.after.method, 'the details on file are the last change');
  // A retry of the last change (its answer lost): stored and audited again, the same details.
  const last = bodies.find((b) => b.method === newest.after.method)!;
  t.equal((await portal(base, fresh, 'PUT', '/portal/api/payout-details', last)).status, 200);
  const again = (await m.client.get(`/api/v1/affiliates/${a.id}/payout_details`)).body;
  t.equal(again.method, onFile.method, 'a retry leaves the same details');
  // The sign-in link, the payout-details link and three notices.
  await waitForMails(base, a.email, 5);
  await sleep(500);
  const notices = (await mailsTo(base, a.email)).filter((x) => /were changed$/.test(x.subject));
  t.equal(notices.length, 3, 'each stored change mailed once');
});
