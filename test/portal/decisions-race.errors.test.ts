import t from 'tap';
import { mailsTo, waitForMails } from '../helpers/invitations.ts';
import { holdRows } from '../helpers/locks.ts';
import { eventually, sleep } from '../helpers/platform.ts';
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

t.test('changes queued behind one lock: the history is one chain, newest first, page by page', async (t) => {
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  await portal(base, s, 'POST', '/portal/api/payout-settings/link', {});
  const fresh = await sessionOf(base, (await newestPortalLink(base, a.email, 2)).url);
  // Each change a different account, its last four digits its own, so the masked details tell them apart.
  const account = (n: number) => ({ method: 'bank', routing_number: '011000015', account_number: `${70_000_000 + n}` });
  // As many as the service's pool in tests (DATABASE_POOL_SIZE) lets wait at once, with one connection to spare;
  // several rounds, since whether two of them begin in the same millisecond is left to chance.
  const perRound = 4;
  const rounds = 5;
  const n = perRound * rounds;
  for (let round = 0; round < rounds; round++) {
    // The affiliate's row held while the changes arrive: their transactions begin at once, some in the same
    // millisecond, and then take the lock one after another.
    const release = await holdRows(
      platform.sql,
      (tx) => tx`select 1 from affiliates where merchant_id = ${m.id} and id = ${a.id} for update`,
    );
    const puts = Promise.all(
      Array.from({ length: perRound }, (_, i) =>
        portal(base, fresh, 'PUT', '/portal/api/payout-details', account(round * perRound + i + 1)),
      ),
    );
    await eventually(async () => {
      const [row] = await platform.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'affiliates' and wait_event_type = 'Lock'`;
      return row!.n >= perRound ? true : undefined;
    });
    await release();
    t.same(
      (await puts).map((r) => r.status),
      Array(perRound).fill(200),
    );
  }
  const [tied] = await platform.sql<{ n: number }[]>`
    select count(*)::int - count(distinct changed_at)::int as n from payout_details_changes
    where merchant_id = ${m.id} and affiliate_id = ${a.id}`;
  t.comment(`${tied!.n} of ${n} changes share their millisecond with one before them`);

  const history = (await m.client.get(`/api/v1/affiliates/${a.id}/payout_details/history?limit=100`)).body
    .data as any[];
  t.equal(history.length, n, 'every change audited');
  t.equal(history.at(-1).before, null, 'the oldest is the first details set');
  for (let i = 0; i + 1 < history.length; i++)
    t.same(history[i].before, history[i + 1].after, `change ${n - i} saw the one listed after it`);
  const onFile = (await m.client.get(`/api/v1/affiliates/${a.id}/payout_details`)).body;
  t.match(onFile, history[0].after, 'the details on file are the newest listed');
  // Pages of one row each, their cursors falling between changes made in the same millisecond: the same list.
  const paged: any[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await m.client.get(`/api/v1/affiliates/${a.id}/payout_details/history?limit=1${q}`);
    t.equal(page.status, 200);
    paged.push(...(page.body.data as any[]));
    cursor = page.body.next_cursor as string | null;
  } while (cursor && paged.length <= n);
  t.same(paged, history, 'paged one at a time, the same changes in the same order');
});
