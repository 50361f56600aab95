import t from 'tap';
import { waitForMails } from '../helpers/invitations.ts';
import { w9 } from '../tax-forms/setup.ts';
import { approvedAffiliate, newestPortalLink, portal, sessionOf, signIn, startPortalPlatform } from './backend.ts';

/** Payout settings in the portal: a fresh mailed link lets the session change payout details; audited and mailed. */
t.test('payout details changed through a fresh link', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant({ name: 'Acme' });
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);

  t.equal((await portal(base, s, 'POST', '/portal/api/payout-settings/link', {})).status, 202);
  const { url, mail } = await newestPortalLink(base, a.email, 2);
  t.equal(mail.subject, 'Change your payout details for Acme');
  t.ok(mail.text.includes(url));
  const fresh = await sessionOf(base, url);
  const settings = await portal(base, fresh, 'GET', '/portal/api/payout-settings');
  t.equal(settings.body.can_change_payout_details, true);
  const until = Date.parse(settings.body.can_change_until) - Date.now();
  t.ok(until > 14 * 60_000 && until <= 15 * 60_000 + 5000, '15 minutes');

  const put = await portal(base, fresh, 'PUT', '/portal/api/payout-details', {
    method: 'bank',
    iban: 'DE89370400440532013000',
  });
  t.equal(put.status, 200);
  t.match(put.body, { method: 'bank', iban: /^\*+3000$/ });
  t.notMatch(put.text, /DE8937040044/, 'masked');

  const history = await m.client.get(`/api/v1/affiliates/${a.id}/payout_details/history`);
  t.match(history.body.data, [{ source: 'portal', actor_id: a.id, before: null, after: { method: 'bank' } }]);
  const mails = await waitForMails(base, a.email, 3);
  const notice = mails.find((x) => x.subject === 'Your payout details for Acme were changed');
  t.ok(notice, 'the affiliate is mailed');
  t.match(notice!.text, /\*+3000/);
  t.notMatch(notice!.text, /DE8937040044/);

  const tax = await portal(base, fresh, 'POST', '/portal/api/tax-forms', w9('123456789'));
  t.equal(tax.status, 201);
  t.match(tax.body, { form_type: 'W-9', tin_masked: /6789$/ });
  t.notMatch(tax.text, /12345/);
  const after = await portal(base, s, 'GET', '/portal/api/payout-settings');
  t.match(after.body, {
    payout_details: { method: 'bank' },
    tax_forms: [{ id: tax.body.id, type: 'W-9', signed_at: '2026-11-20' }],
    can_change_payout_details: false,
  });
  t.equal(
    (await portal(base, s, 'PUT', '/portal/api/payout-details', { method: 'paypal', paypal_email: 'x@example.com' }))
      .status,
    403,
    'the other session, without the fresh link, still cannot',
  );
});
