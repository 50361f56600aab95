import { createHash, randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { newId } from '@platform/shared/ids';
import { createAffiliate, rawRequest } from '../events/setup.ts';
import { startPlatform } from '../helpers/platform.ts';
import {
  onboardingLinksPath,
  openOnboardingPage,
  payoutDetailsPath,
  payoutHistoryPath,
  submitOnboardingPage,
} from './setup.ts';

// One usable onboarding link per affiliate: a new link revokes the open ones, using a link revokes the others, and
// a revoked link is refused on the page (410, no form, nothing on file) and stores nothing.

const platform = await startPlatform(t);
const { client, id: merchantId } = await platform.merchant();
const IBAN_A = 'DE89 3704 0044 0532 0130 00';
const IBAN_B = 'GB82 WEST 1234 5698 7654 32';

/** A link as one made before links revoked one another: open beside the affiliate's others. */
async function legacyOpenLink(affiliateId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await platform.sql`
    insert into onboarding_links (token_hash, merchant_id, affiliate_id, expires_at)
    values (${createHash('sha256').update(token).digest()}, ${merchantId}, ${affiliateId}, now() + interval '1 day')`;
  return `${platform.baseUrl}/onboarding/${token}`;
}

function expectReplaced(t: Test, page: { status: number; text: string }, what: string) {
  t.equal(page.status, 410, `${what}: 410`);
  t.notMatch(page.text, '<form', `${what}: no form`);
  t.notMatch(page.text, /\*{5}/, `${what}: nothing on file shown`);
}

t.test('a second link revokes the first: the first is refused and stores nothing', async (t) => {
  const affiliate = await createAffiliate(client, 'twice@example.com');
  const first = await client.post(onboardingLinksPath(affiliate.id));
  t.equal(first.status, 201);
  t.match(first.body.id, /^obl_/);
  t.equal((await openOnboardingPage(platform.baseUrl, first.body.url)).status, 200, 'usable while it is the only one');
  const second = await client.post(onboardingLinksPath(affiliate.id));
  t.equal(second.status, 201);

  const opened = await openOnboardingPage(platform.baseUrl, first.body.url);
  expectReplaced(t, opened, 'the first link opened');
  t.match(opened.text, '<h1>Link replaced</h1>');
  const submitted = await submitOnboardingPage(platform.baseUrl, first.body.url, '123-45-6789', IBAN_A);
  expectReplaced(t, submitted, 'the first link submitted');
  t.match(submitted.text, 'This onboarding link was replaced by a newer one');
  t.same((await client.get(payoutDetailsPath(affiliate.id))).body, { method: null, updated_at: null }, 'none stored');
  t.same((await client.get(payoutHistoryPath(affiliate.id))).body, { data: [], next_cursor: null });

  const used = await submitOnboardingPage(platform.baseUrl, second.body.url, '123-45-6789', IBAN_B);
  t.equal(used.status, 200, 'the newest link works');
  t.match((await client.get(payoutDetailsPath(affiliate.id))).body, { method: 'bank', iban: '*****5432' });
});

t.test('two links open at once, one used: the other is refused and cannot overwrite', async (t) => {
  const affiliate = await createAffiliate(client, 'two-open@example.com');
  const older = await legacyOpenLink(affiliate.id);
  const link = await client.post(onboardingLinksPath(affiliate.id));
  const newer = await legacyOpenLink(affiliate.id);
  t.equal((await openOnboardingPage(platform.baseUrl, newer)).status, 200, 'a link from before: still open');

  const used = await submitOnboardingPage(platform.baseUrl, link.body.url, '123-45-6789', IBAN_B);
  t.equal(used.status, 200);
  for (const [what, url] of [
    ['the older link', older],
    ['the newer link', newer],
  ] as const) {
    expectReplaced(t, await openOnboardingPage(platform.baseUrl, url), `${what} opened`);
    expectReplaced(t, await submitOnboardingPage(platform.baseUrl, url, '123-45-6780', IBAN_A), `${what} used`);
  }
  t.match((await client.get(payoutDetailsPath(affiliate.id))).body, { method: 'bank', iban: '*****5432' }, 'kept');
  const history = await client.get(payoutHistoryPath(affiliate.id));
  t.equal(history.body.data.length, 1, 'one change');

  const used2 = await submitOnboardingPage(platform.baseUrl, link.body.url, '123-45-6780', IBAN_A);
  t.equal(used2.status, 410, 'the used link itself: once only');
  const next = await client.post(onboardingLinksPath(affiliate.id));
  t.equal(
    (await openOnboardingPage(platform.baseUrl, next.body.url)).status,
    200,
    'a link made after one was used works',
  );
});

t.test('two open links submitted at once: one stores, the other is refused', async (t) => {
  const affiliate = await createAffiliate(client, 'race@example.com');
  const a = await legacyOpenLink(affiliate.id);
  const b = await legacyOpenLink(affiliate.id);
  const answers = await Promise.all([
    submitOnboardingPage(platform.baseUrl, a, '123-45-6789', IBAN_A),
    submitOnboardingPage(platform.baseUrl, b, '123-45-6780', IBAN_B),
  ]);
  t.same(answers.map((r) => r.status).sort(), [200, 410]);
  const history = await client.get(payoutHistoryPath(affiliate.id));
  t.equal(history.body.data.length, 1, 'one change stored');
  const forms = await platform.sql`select 1 from tax_forms where affiliate_id = ${affiliate.id}`;
  t.equal(forms.length, 1, 'one tax form stored');
});

t.test('links created at once: exactly one stays usable', async (t) => {
  const affiliate = await createAffiliate(client, 'burst@example.com');
  const links = await Promise.all(Array.from({ length: 4 }, () => client.post(onboardingLinksPath(affiliate.id))));
  t.same(
    links.map((l) => l.status),
    [201, 201, 201, 201],
  );
  const pages = await Promise.all(links.map((l) => openOnboardingPage(platform.baseUrl, l.body.url)));
  t.same(pages.map((p) => p.status).sort(), [200, 410, 410, 410]);
});

t.test("another merchant's affiliate: 404 for its history; a made-up link is not found", async (t) => {
  const affiliate = await createAffiliate(client, 'mine@example.com');
  const other = await platform.merchant();
  const res = await other.client.get(payoutHistoryPath(affiliate.id));
  t.equal(res.status, 404);
  t.match(res.body, { error: { code: 'NOT_FOUND', message: 'No such affiliate' } });
  t.equal((await other.client.get(payoutHistoryPath('nonsense'))).status, 404);
  t.equal((await other.client.post(onboardingLinksPath(affiliate.id))).status, 404, 'nor a link for it');
  const page = await rawRequest(platform.baseUrl, 'GET', `/onboarding/${newId('obl')}`);
  t.equal(page.status, 404, 'a link id is no token');
});
