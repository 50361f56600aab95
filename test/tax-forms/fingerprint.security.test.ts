import t from 'tap';
import { clickReferralLink, createAffiliate, rawRequest, setSettings } from '../events/setup.ts';
import { startDashboardPlatform } from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook } from '../helpers/receiver.ts';
import { onboardingLinksPath } from './setup.ts';

// Every service but the dispatcher's siblings it does not need: a referral click, the onboarding page, a conversion
// event through the public API, the commissions engine's fraud rules and the signed webhook.
const { platform } = await startDashboardPlatform(t, { services: ['events', 'commissions', 'dispatcher'] });

t.test(
  'a conversion through their own link after opening the onboarding page: fraud.flagged own_fingerprint',
  async (t) => {
    const m = await platform.merchant();
    await setSettings(platform.sql, m.id, { default_rate: 0.1, landing_url: 'https://shop.example.com/' });
    const receiver = await startReceiver(t);
    const endpoint = await m.client.post('/api/v1/webhook_endpoints', {
      url: receiver.url,
      event_types: ['fraud.flagged'],
    });
    t.equal(endpoint.status, 201);
    const affiliate = await createAffiliate(m.client, 'sly@example.com');
    const honest = await createAffiliate(m.client, 'honest@example.com');

    // The affiliate clicks their own link (the browser gets its _svc_sess visit), then opens their onboarding page.
    const visit = await clickReferralLink(platform.baseUrl, m.id, affiliate.slug);
    const link = await m.client.post(onboardingLinksPath(affiliate.id));
    const page = await rawRequest(platform.baseUrl, 'GET', new URL(link.body.url).pathname, {
      cookie: `_svc_sess=${visit}`,
    });
    t.equal(page.status, 200);
    const [row] = await platform.sql<{ fingerprint_visitor_ids: string[] }[]>`
    select fingerprint_visitor_ids from affiliates where id = ${affiliate.id}`;
    t.strictSame(row!.fingerprint_visitor_ids, [visit], 'the visit is recorded as the affiliate’s own');

    // A customer of someone else's link converts too: no flag for them.
    const otherVisit = await clickReferralLink(platform.baseUrl, m.id, honest.slug);
    for (const [orderId, cookie] of [
      ['order-own', visit],
      ['order-other', otherVisit],
    ]) {
      const event = await m.client.post('/api/v1/events', {
        event_type: 'purchase',
        external_id: orderId,
        cookie_id: cookie,
        amount: 100,
      });
      t.equal(event.status, 201);
    }

    const hook = await eventually(async () => receiver.received.find((h) => h.type === 'fraud.flagged'), 20_000);
    const envelope = verifyWebhook(endpoint.body.secret, hook) as { data: Record<string, unknown> };
    t.match(envelope.data, { affiliate_id: affiliate.id, rule: 'own_fingerprint', details: { visit_id: visit } });
    const flags = await platform.sql<{ affiliate_id: string; rule: string }[]>`
    select affiliate_id, rule from fraud_flags where merchant_id = ${m.id}`;
    t.same(
      flags.map((f) => ({ ...f })),
      [{ affiliate_id: affiliate.id, rule: 'own_fingerprint' }],
      'the honest affiliate’s conversion is not flagged',
    );
  },
);
