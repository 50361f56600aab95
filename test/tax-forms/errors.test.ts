import t from 'tap';
import { createAffiliate, rawRequest } from '../events/setup.ts';
import { expectError, expectInvalid } from '../helpers/errors.ts';
import { startPlatform } from '../helpers/platform.ts';
import { apiV1Document as buildOpenApi } from '@platform/gateway/http/openapi/documents';
import { onboardingLinksPath, payoutDetailsPath, putPayoutDetails, taxFormsPath, w8ben, w9 } from './setup.ts';

const platform = await startPlatform(t);
const { client } = await platform.merchant();
const affiliate = await createAffiliate(client, 'errors@example.com');
const forms = taxFormsPath(affiliate.id);
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

t.test('a W-9 with an invalid SSN: 400 on the path tin, without the number', async (t) => {
  const cases: [string, string][] = [
    ['000-12-3456', 'is not a valid SSN (area number)'],
    ['666-12-3456', 'is not a valid SSN (area number)'],
    ['900-12-3456', 'is not a valid SSN (area number)'],
    ['999123456', 'is not a valid SSN (area number)'],
    ['123-00-4567', 'is not a valid SSN (group number 00)'],
    ['123-45-0000', 'is not a valid SSN (serial number 0000)'],
    ['123-456-789', 'must be an SSN: 123-45-6789 or nine digits'],
    ['12345678', 'must be an SSN: 123-45-6789 or nine digits'],
    ['12-3456789', 'must be an SSN: 123-45-6789 or nine digits'],
  ];
  for (const [tin, message] of cases) {
    const res = await client.post(forms, w9(tin));
    expectInvalid(t, res, [{ path: 'tin', message }]);
    t.notMatch(res.text, tin.replaceAll('-', ''));
  }
});

t.test('EINs, countries, dates, the W-8 foreign TIN rule and the form type', async (t) => {
  expectInvalid(t, await client.post(forms, w9('07-1234567', { tin_type: 'ein' })), [
    { path: 'tin', message: 'is not a valid EIN (prefix)' },
  ]);
  expectInvalid(t, await client.post(forms, w9('123-45-6789', { tin_type: 'ein' })), [
    { path: 'tin', message: 'must be an EIN: 12-3456789 or nine digits' },
  ]);
  expectInvalid(t, await client.post(forms, w9('123-45-6789', { signed_on: tomorrow })), [
    { path: 'signed_on', message: 'must not be in the future' },
  ]);
  expectInvalid(t, await client.post(forms, w9('123-45-6789', { signed_on: '2026-02-30' })), [
    { path: 'signed_on', message: 'must match format "date"' },
  ]);
  const w9Abroad = w9('123-45-6789');
  expectInvalid(t, await client.post(forms, { ...w9Abroad, address: { ...w9Abroad.address, country: 'DE' } }), [
    { path: 'address.country', message: 'must be one of: "US"' },
  ]);
  expectInvalid(t, await client.post(forms, w8ben({ citizenship_country: 'XX', treaty_country: 'EU' })), [
    { path: 'citizenship_country', message: 'is not an ISO 3166-1 alpha-2 country code' },
    { path: 'treaty_country', message: 'is not an ISO 3166-1 alpha-2 country code' },
  ]);
  expectInvalid(t, await client.post(forms, w8ben({ citizenship_country: 'de' })), [
    { path: 'citizenship_country', message: 'must match pattern "^[A-Z]{2}$"' },
  ]);
  expectInvalid(t, await client.post(forms, w8ben({ foreign_tin: undefined })), [
    { path: 'foreign_tin', message: 'is required unless foreign_tin_not_required_reason is given' },
  ]);
  expectInvalid(t, await client.post(forms, w8ben({ foreign_tin_not_required_reason: 'none' })), [
    { path: 'foreign_tin_not_required_reason', message: 'must be left out when foreign_tin is given' },
  ]);
  expectInvalid(t, await client.post(forms, w8ben({ form_type: 'W-8BEN-E' })), [
    { path: 'incorporation_country', message: 'is required' },
    { path: 'citizenship_country', message: 'is not a known field' },
  ]);
  expectInvalid(t, await client.post(forms, { ...w9('123-45-6789'), form_type: 'W-4' }), [
    { path: 'form_type', message: 'must be one of: "W-9", "W-8BEN", "W-8BEN-E"' },
  ]);
  expectInvalid(t, await client.post(forms, {}), [
    { path: 'form_type', message: 'must be one of: "W-9", "W-8BEN", "W-8BEN-E"' },
  ]);
  t.same((await client.get(forms)).body, { data: [] }, 'nothing was stored');
});

t.test('payout details: IBAN checksum, ABA checksum, account number, one way of paying', async (t) => {
  const put = (body: unknown) => putPayoutDetails(client, affiliate.id, body);
  expectInvalid(t, await put({ method: 'bank', iban: 'DE89 3704 0044 0532 0130 01' }), [
    { path: 'iban', message: 'is not a valid IBAN (shape or checksum)' },
  ]);
  expectInvalid(t, await put({ method: 'bank', iban: 'XX89370400440532013000' }), [
    { path: 'iban', message: 'is not a valid IBAN (shape or checksum)' },
  ]);
  expectInvalid(t, await put({ method: 'bank', routing_number: '011000016', account_number: '12345' }), [
    { path: 'routing_number', message: 'is not a valid ABA routing number (nine digits, checksum)' },
  ]);
  expectInvalid(t, await put({ method: 'bank', routing_number: '011000015', account_number: '12a' }), [
    { path: 'account_number', message: 'must be 4 to 17 digits' },
  ]);
  expectInvalid(t, await put({ method: 'bank', routing_number: '011000015' }), [
    { path: 'account_number', message: 'is required with routing_number' },
  ]);
  expectInvalid(t, await put({ method: 'bank' }), [
    { path: 'iban', message: 'is required unless routing_number and account_number are given' },
  ]);
  expectInvalid(
    t,
    await put({ method: 'bank', iban: 'DE89370400440532013000', routing_number: '011000015', account_number: '1234' }),
    [{ path: 'iban', message: 'give either iban or routing_number and account_number, not both' }],
  );
  expectInvalid(t, await put({ method: 'paypal', paypal_email: 'not-an-email' }), [
    { path: 'paypal_email', message: 'must match format "email"' },
  ]);
  expectInvalid(t, await put({ method: 'cheque' }), [{ path: 'method', message: 'must be one of: "paypal", "bank"' }]);
  t.same((await client.get(payoutDetailsPath(affiliate.id))).body, { method: null, updated_at: null }, 'none stored');
});

t.test('unknown and malformed affiliates: 404 on every route', async (t) => {
  for (const id of ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c', 'nonsense']) {
    expectError(t, await client.post(taxFormsPath(id), w9('123-45-6789')), 404, 'NOT_FOUND', 'No such affiliate');
    expectError(t, await client.get(taxFormsPath(id)), 404, 'NOT_FOUND', 'No such affiliate');
    expectError(
      t,
      await putPayoutDetails(client, id, { method: 'paypal', paypal_email: 'a@example.com' }),
      404,
      'NOT_FOUND',
      'No such affiliate',
    );
    expectError(t, await client.get(payoutDetailsPath(id)), 404, 'NOT_FOUND', 'No such affiliate');
    expectError(t, await client.post(onboardingLinksPath(id)), 404, 'NOT_FOUND', 'No such affiliate');
  }
});

t.test('the onboarding page: unknown tokens, a refused form and a read-only key', async (t) => {
  for (const path of ['/onboarding/short', `/onboarding/${'a'.repeat(43)}`]) {
    const page = await rawRequest(platform.baseUrl, 'GET', path);
    t.equal(page.status, 404);
    t.match(page.text, '<h1>Link not found</h1>');
    t.notMatch(page.text, '<form');
    t.equal(page.headers['cache-control'], 'no-store');
  }
  const link = await client.post(onboardingLinksPath(affiliate.id));
  const path = new URL(link.body.url).pathname;
  const refused = await rawRequest(
    platform.baseUrl,
    'POST',
    path,
    { 'content-type': 'application/x-www-form-urlencoded' },
    'form_type=W-9&tin=000-11-2222&method=paypal',
  );
  t.equal(refused.status, 400);
  t.match(refused.text, '<li><strong>tax_form.legal_name</strong> is required</li>');
  t.match(refused.text, '<li><strong>payout_details.paypal_email</strong> is required</li>');
  t.match(refused.text, '<form', 'the form again: the link is still usable');
  t.notMatch(refused.text, '000-11-2222');
  const csp = String(refused.headers['content-security-policy']);
  t.match(csp, "script-src 'self'", 'no inline script may run');
  t.match(csp, "form-action 'self'");
  t.equal(refused.headers['referrer-policy'], 'no-referrer', 'the token in the address goes to no other site');
  t.equal(refused.headers['cache-control'], 'no-store');

  const readOnly = await platform.merchant({ scopes: 'read' });
  const other = await createAffiliate(client, 'readonly@example.com');
  expectError(
    t,
    await readOnly.client.post(onboardingLinksPath(other.id)),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
});

t.test('the OpenAPI document: the new operations, and the page as public HTML', async (t) => {
  const doc = (await client.get('/api/v1/openapi')).body as { paths: Record<string, Record<string, any>> };
  t.same(doc, JSON.parse(JSON.stringify(buildOpenApi())), 'served as built');
  t.same(Object.keys(doc.paths['/api/v1/affiliates/{affiliate_id}/tax_forms']!).sort(), ['get', 'post']);
  t.same(Object.keys(doc.paths['/api/v1/affiliates/{affiliate_id}/payout_details']!).sort(), ['get', 'put']);
  t.same(Object.keys(doc.paths['/api/v1/affiliates/{affiliate_id}/onboarding_links']!), ['post']);
  const page = doc.paths['/onboarding/{token}']!;
  for (const method of ['get', 'post']) {
    t.same(page[method].security, [], `${method}: public`);
    t.same(Object.keys(page[method].responses['404'].content), ['text/html']);
  }
});
