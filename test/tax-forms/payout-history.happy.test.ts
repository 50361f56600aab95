import t from 'tap';
import { createAffiliate } from '../events/setup.ts';
import { dashboardMerchant, sessionRequest, signInHttp } from '../helpers/dashboard.ts';
import { startPlatform } from '../helpers/platform.ts';
import {
  onboardingLinksPath,
  payoutHistoryPath,
  payoutVaultRows,
  putPayoutDetails,
  submitOnboardingPage,
} from './setup.ts';

// Every change of payout details is audited, masked, with its source and who made it: by a key through the API, by
// a dashboard user, by the affiliate through an onboarding link. The dashboard reads the history with its session.

const platform = await startPlatform(t);
const m = await dashboardMerchant(platform);
const session = await signInHttp(platform.baseUrl, m.email);
const [user] = await platform.sql<{ id: string }[]>`select id from dashboard_users where merchant_id = ${m.id}`;
const [key] = await platform.sql<{ id: string }[]>`select id from api_keys where merchant_id = ${m.id}`;

t.test('a change by key, by the dashboard and by an onboarding link: one audit row each, masked', async (t) => {
  const affiliate = await createAffiliate(m.client, 'audited@example.com');
  const byKey = await putPayoutDetails(m.client, affiliate.id, { method: 'paypal', paypal_email: 'jane@example.com' });
  t.equal(byKey.status, 200);
  const byDashboard = await sessionRequest(
    platform.baseUrl,
    session,
    'PUT',
    `/api/v1/affiliates/${affiliate.id}/payout_details`,
    { method: 'bank', routing_number: '011000015', account_number: '000123456789' },
  );
  t.equal(byDashboard.status, 200, byDashboard.text);
  const link = await m.client.post(onboardingLinksPath(affiliate.id));
  const used = await submitOnboardingPage(
    platform.baseUrl,
    link.body.url,
    '123-45-6789',
    'DE89 3704 0044 0532 0130 00',
  );
  t.equal(used.status, 200);

  // What the dashboard's page asks for, with its session.
  const history = await sessionRequest(platform.baseUrl, session, 'GET', payoutHistoryPath(affiliate.id));
  t.equal(history.status, 200);
  t.equal(history.headers.get('cache-control'), 'no-store');
  const paypal = { method: 'paypal', paypal_email: '*****.com' };
  const aba = { method: 'bank', routing_number: '*****0015', account_number: '*****6789' };
  const iban = { method: 'bank', iban: '*****3000' };
  const changes = history.body.data as Record<string, unknown>[];
  t.strictSame(
    changes.map(({ id: _id, changed_at: _at, ...rest }) => rest),
    [
      { affiliate_id: affiliate.id, source: 'onboarding_link', actor_id: link.body.id, before: aba, after: iban },
      { affiliate_id: affiliate.id, source: 'dashboard', actor_id: user!.id, before: paypal, after: aba },
      { affiliate_id: affiliate.id, source: 'api', actor_id: key!.id, before: null, after: paypal },
    ],
  );
  t.equal(history.body.next_cursor, null);
  for (const c of changes) t.match(c, { id: /^pdc_/, changed_at: /^\d{4}-\d\d-\d\dT.*Z$/ });
  t.equal(changes[2]!['changed_at'], byKey.body.updated_at, 'the time the details were set');
  t.notMatch(history.text, /jane@example|000123456789|370400440532013000|011000015/, 'nothing in clear');

  // The same through the API, a page at a time.
  const first = await m.client.get(`${payoutHistoryPath(affiliate.id)}?limit=2`);
  t.equal(first.status, 200);
  t.strictSame(first.body.data, changes.slice(0, 2));
  t.type(first.body.next_cursor, 'string');
  const second = await m.client.get(
    `${payoutHistoryPath(affiliate.id)}?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
  );
  t.strictSame(second.body, { data: changes.slice(2), next_cursor: null });
});

t.test('replaced payout details leave the vault row superseded, the one in use not', async (t) => {
  const affiliate = await createAffiliate(m.client, 'superseded@example.com');
  await putPayoutDetails(m.client, affiliate.id, { method: 'paypal', paypal_email: 'one@example.com' });
  await putPayoutDetails(m.client, affiliate.id, { method: 'paypal', paypal_email: 'two@example.com' });
  const rows = await payoutVaultRows(platform.sql, m.id, affiliate.id);
  t.strictSame(rows, [
    { in_use: false, superseded: true },
    { in_use: true, superseded: false },
  ]);
});
