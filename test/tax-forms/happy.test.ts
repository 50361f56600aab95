import t from 'tap';
import { createAffiliate, setSettings } from '../events/setup.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook } from '../helpers/receiver.ts';
import { startWebhookPlatform } from '../helpers/webhooks.ts';
import { onboardingLinksPath, payoutDetailsPath, putPayoutDetails, taxFormsPath, w8ben, w9 } from './setup.ts';

const { platform } = await startWebhookPlatform(t);
const { client, id: merchantId } = await platform.merchant();

t.test('a W-9 is stored masked and emits a signed tax_form.submitted without the TIN', async (t) => {
  const receiver = await startReceiver(t);
  const endpoint = await client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['tax_form.submitted'],
  });
  t.equal(endpoint.status, 201);
  const affiliate = await createAffiliate(client, 'jane@example.com');

  const created = await client.post(taxFormsPath(affiliate.id), w9('123-45-6789'));
  t.equal(created.status, 201);
  t.strictSame(created.body, {
    id: created.body.id,
    affiliate_id: affiliate.id,
    form_type: 'W-9',
    status: 'valid',
    legal_name: 'Jane Doe',
    tin_type: 'ssn',
    tin_masked: '*****6789',
    country: 'US',
    signed_on: '2026-11-20',
    submitted_at: created.body.submitted_at,
    expires_at: null,
  });
  t.match(created.body.id, /^txf_/);

  const listed = await client.get(taxFormsPath(affiliate.id));
  t.equal(listed.status, 200);
  t.strictSame(listed.body, { data: [created.body] });

  const hook = await eventually(async () => receiver.received.find((h) => h.type === 'tax_form.submitted'));
  const envelope = verifyWebhook(endpoint.body.secret, hook) as Record<string, unknown>;
  t.strictSame(envelope['data'], {
    affiliate_id: affiliate.id,
    form_type: 'W-9',
    submitted_at: created.body.submitted_at,
  });
  t.notMatch(hook.body, /123456789|123-45-6789/);
});

t.test(
  'a later form supersedes the one in force; a W-8 expires at the end of the third year after signing',
  async (t) => {
    const affiliate = await createAffiliate(client, 'hans@example.com');
    const first = await client.post(taxFormsPath(affiliate.id), w9('12-3456789', { tin_type: 'ein' }));
    t.equal(first.status, 201);
    t.equal(first.body.tin_type, 'ein');
    const second = await client.post(taxFormsPath(affiliate.id), w8ben());
    t.equal(second.status, 201);
    t.match(second.body, {
      form_type: 'W-8BEN',
      status: 'valid',
      tin_type: 'foreign',
      tin_masked: '*****2101',
      country: 'DE',
      expires_at: '2029-12-31T23:59:59.999Z',
    });
    const listed = await client.get(taxFormsPath(affiliate.id));
    t.same(
      listed.body.data.map((f: { id: string; status: string }) => [f.id, f.status]),
      [
        [second.body.id, 'valid'],
        [first.body.id, 'superseded'],
      ],
    );

    const old = await client.post(taxFormsPath(affiliate.id), w8ben({ signed_on: '2022-06-30' }));
    t.equal(old.status, 201);
    t.equal(old.body.status, 'expired', 'signed in 2022: valid through 2025 only');
    t.equal(old.body.expires_at, '2025-12-31T23:59:59.999Z');

    const noTin = await client.post(
      taxFormsPath(affiliate.id),
      w8ben({
        foreign_tin: undefined,
        foreign_tin_not_required_reason: 'not issued',
        form_type: 'W-8BEN-E',
        citizenship_country: undefined,
        incorporation_country: 'CH',
      }),
    );
    t.equal(noTin.status, 201, noTin.text);
    t.match(noTin.body, { form_type: 'W-8BEN-E', tin_type: null, tin_masked: null });
  },
);

t.test('payout details: PayPal, IBAN, routing and account number, each read back masked', async (t) => {
  const affiliate = await createAffiliate(client, 'payee@example.com');
  const none = await client.get(payoutDetailsPath(affiliate.id));
  t.equal(none.status, 200);
  t.strictSame(none.body, { method: null, updated_at: null }, 'none set yet');

  const paypal = await putPayoutDetails(client, affiliate.id, { method: 'paypal', paypal_email: 'payee@example.com' });
  t.equal(paypal.status, 200);
  t.strictSame(paypal.body, { method: 'paypal', paypal_email: '*****.com', updated_at: paypal.body.updated_at });

  const iban = await putPayoutDetails(client, affiliate.id, { method: 'bank', iban: 'de89 3704 0044 0532 0130 00' });
  t.equal(iban.status, 200);
  t.strictSame(iban.body, { method: 'bank', iban: '*****3000', updated_at: iban.body.updated_at });

  const aba = await putPayoutDetails(client, affiliate.id, {
    method: 'bank',
    routing_number: '011000015',
    account_number: '000123456789',
  });
  t.equal(aba.status, 200);
  t.strictSame(aba.body, {
    method: 'bank',
    routing_number: '*****0015',
    account_number: '*****6789',
    updated_at: aba.body.updated_at,
  });
  const read = await client.get(payoutDetailsPath(affiliate.id));
  t.strictSame(read.body, aba.body);
});

t.test('an onboarding link: a URL on the platform, 24 hours', async (t) => {
  const affiliate = await createAffiliate(client, 'link@example.com');
  const before = Date.now();
  const link = await client.post(onboardingLinksPath(affiliate.id));
  t.equal(link.status, 201);
  t.match(link.body.url, /^http:\/\/localhost:8080\/onboarding\/[A-Za-z0-9_-]{43}$/);
  const expires = Date.parse(link.body.expires_at);
  t.ok(expires >= before + 24 * 3600_000 && expires <= Date.now() + 24 * 3600_000, 'expires in 24 hours');

  // On the merchant's own tracking host, where the affiliate's referral clicks set the visit cookie.
  await setSettings(platform.sql, merchantId, { tracking_host: 'track.example.com' });
  const hosted = await client.post(onboardingLinksPath(affiliate.id));
  t.match(hosted.body.url, /^https:\/\/track\.example\.com\/onboarding\/[A-Za-z0-9_-]{43}$/);
  await setSettings(platform.sql, merchantId, { tracking_host: null });
});

t.test('a valid form releases the payouts held for want of one, in its transaction', async (t) => {
  const affiliate = await createAffiliate(client, 'held@example.com');
  const [merchant] = await platform.sql<{ merchant_id: string }[]>`
    select merchant_id from affiliates where id = ${affiliate.id}`;
  const held = async (id: string) =>
    (await platform.sql<{ held_reason: string | null }[]>`select held_reason from payouts where id = ${id}`)[0]!
      .held_reason;
  const insertHeld = async (id: string) => platform.sql`
    insert into payouts (id, merchant_id, affiliate_id, amount, currency, status, period_start, period_end, created_at,
                         held_reason)
    values (${id}, ${merchant!.merchant_id}, ${affiliate.id}, 700, 'USD', 'pending', now(), now(), now(),
            'tax_form_required')`;
  await insertHeld('po_held_by_expired_form');
  const expired = await client.post(taxFormsPath(affiliate.id), w8ben({ signed_on: '2020-01-15' }));
  t.equal(expired.body.status, 'expired');
  t.equal(await held('po_held_by_expired_form'), 'tax_form_required', 'an expired form releases nothing');

  const valid = await client.post(taxFormsPath(affiliate.id), w9('123-45-6789'));
  t.equal(valid.status, 201);
  t.equal(await held('po_held_by_expired_form'), null, 'released by the valid form');
});

t.test('forms submitted concurrently: each stored, exactly one in force', async (t) => {
  const affiliate = await createAffiliate(client, 'busy@example.com');
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => client.post(taxFormsPath(affiliate.id), w9(`123-45-${6780 + i}`))),
  );
  t.same(
    answers.map((a) => a.status),
    [201, 201, 201, 201, 201, 201],
  );
  const listed = await client.get(taxFormsPath(affiliate.id));
  t.same(listed.body.data.map((f: { status: string }) => f.status).sort(), [
    'superseded',
    'superseded',
    'superseded',
    'superseded',
    'superseded',
    'valid',
  ]);
});
