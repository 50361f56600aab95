import { randomInt } from 'node:crypto';
import t from 'tap';
import type { ApiResponse } from '../helpers/client.ts';
import { expectError } from '../helpers/errors.ts';
import { createAffiliate, rawRequest } from '../events/setup.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { startWebhookPlatform } from '../helpers/webhooks.ts';
import { onboardingLinksPath, payoutDetailsPath, putPayoutDetails, taxFormsPath, w9 } from './setup.ts';

const { platform, dispatcherLogs } = await startWebhookPlatform(t);

/** An SSN of valid shape made for this run, so that finding its digits anywhere can only mean a leak. */
const pad = (n: number, width: number) => String(n).padStart(width, '0');
const ssn = `${pad(randomInt(100, 666), 3)}-${pad(randomInt(10, 100), 2)}-${pad(randomInt(1000, 10000), 4)}`;
const ssnDigits = ssn.replaceAll('-', '');
const account = String(randomInt(10_000_000, 100_000_000)) + String(randomInt(1000, 10000));

t.test(
  "the TIN's and the account number's digits appear in no response, log line, outbox or webhook row",
  async (t) => {
    const { client, id: merchantId } = await platform.merchant();
    const receiver = await startReceiver(t);
    const endpoint = await client.post('/api/v1/webhook_endpoints', { url: receiver.url });
    t.equal(endpoint.status, 201);
    const affiliate = await createAffiliate(client, 'secret@example.com');
    const responses: ApiResponse[] = [];
    const record = async (p: Promise<ApiResponse>) => {
      const res = await p;
      responses.push(res);
      return res;
    };

    t.equal((await record(client.post(taxFormsPath(affiliate.id), w9(ssn)))).status, 201);
    // A refused body repeats nothing of what it refuses either.
    t.equal((await record(client.post(taxFormsPath(affiliate.id), w9(ssn, { tin_type: 'ein' })))).status, 400);
    await record(client.get(taxFormsPath(affiliate.id)));
    const details = { method: 'bank', routing_number: '011000015', account_number: account };
    t.equal((await record(putPayoutDetails(client, affiliate.id, details))).status, 200);
    t.equal(
      (await record(putPayoutDetails(client, affiliate.id, { ...details, routing_number: '011000016' }))).status,
      400,
    );
    await record(client.get(payoutDetailsPath(affiliate.id)));
    await record(client.get(`/api/v1/affiliates/${affiliate.id}`));
    const link = await record(client.post(onboardingLinksPath(affiliate.id)));
    const page = await rawRequest(platform.baseUrl, 'GET', new URL(link.body.url).pathname);
    t.equal(page.status, 200);
    t.match(page.text, '*****' + ssnDigits.slice(-4), 'the page shows the TIN masked');

    await eventually(async () => receiver.received.find((h) => h.type === 'tax_form.submitted'));

    const secrets = [ssnDigits, ssn, account];
    const leaksIn = (text: string) => secrets.filter((s) => text.includes(s));
    for (const res of responses) t.same(leaksIn(res.text), [], `response ${res.status}: ${res.text.slice(0, 80)}`);
    t.same(leaksIn(page.text), [], 'the onboarding page');
    t.same(leaksIn(receiver.received.map((h) => h.body).join('\n')), [], 'webhooks received');
    t.same(leaksIn(platform.logs.join('\n')), [], 'gateway and affiliates log lines');
    t.same(leaksIn(dispatcherLogs.join('\n')), [], 'dispatcher log lines');
    t.ok(
      platform.logs.some((l) => l.includes('tax form stored')),
      'the log was captured',
    );

    // At rest, every table: the outbox, the webhook messages, deliveries and attempts, the vault, the forms.
    const tables = await platform.sql<{ table_name: string }[]>`
    select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
    const names = tables.map((r) => r.table_name);
    for (const table of [
      'outbox',
      'webhook_messages',
      'webhook_deliveries',
      'webhook_attempts',
      'vault_secrets',
      'tax_forms',
    ])
      t.ok(names.includes(table), `${table} is searched`);
    for (const table of names) {
      const rows = await platform.sql.unsafe<{ row: string }[]>(`select t::text as row from "${table}" t`);
      t.same(leaksIn(rows.map((r) => r.row).join('\n')), [], `table ${table}`);
    }
    const [outbox] = await platform.sql<{ data: Record<string, unknown> }[]>`
    select data from outbox where merchant_id = ${merchantId} and type = 'tax_form.submitted'`;
    t.same(Object.keys(outbox!.data).sort(), ['affiliate_id', 'form_type', 'submitted_at'], 'the event says no more');

    // The vault holds them encrypted, under the id of the key in use.
    const vault = await platform.sql<{ kind: string; key_id: string; ciphertext: string }[]>`
    select kind, key_id, ciphertext from vault_secrets where affiliate_id = ${affiliate.id} order by created_at`;
    t.same(
      vault.map((v) => v.kind),
      ['tin', 'payout_details'],
    );
    for (const v of vault) {
      t.match(v.ciphertext, /^v2:[\w-]+:[\w-]+:[\w-]+$/);
      t.match(v.key_id, /^[0-9a-f]{16}$/);
    }
  },
);

t.test('another merchant gets 404 on every route of tax forms, payout details and onboarding links', async (t) => {
  const owner = await platform.merchant();
  const other = await platform.merchant();
  const affiliate = await createAffiliate(owner.client, 'mine@example.com');
  t.equal((await owner.client.post(taxFormsPath(affiliate.id), w9('123-45-6789'))).status, 201);
  t.equal(
    (await putPayoutDetails(owner.client, affiliate.id, { method: 'paypal', paypal_email: 'mine@example.com' })).status,
    200,
  );

  const attempts: [string, Promise<ApiResponse>][] = [
    ['POST tax_forms', other.client.post(taxFormsPath(affiliate.id), w9('123-45-6789'))],
    ['GET tax_forms', other.client.get(taxFormsPath(affiliate.id))],
    [
      'PUT payout_details',
      putPayoutDetails(other.client, affiliate.id, { method: 'paypal', paypal_email: 'x@example.com' }),
    ],
    ['GET payout_details', other.client.get(payoutDetailsPath(affiliate.id))],
    ['POST onboarding_links', other.client.post(onboardingLinksPath(affiliate.id))],
  ];
  for (const [what, attempt] of attempts) {
    const res = await attempt;
    t.test(what, async (t) => expectError(t, res, 404, 'NOT_FOUND', 'No such affiliate'));
  }
  const forms = await owner.client.get(taxFormsPath(affiliate.id));
  t.equal(forms.body.data.length, 1, 'no form was added');
  t.equal((await owner.client.get(payoutDetailsPath(affiliate.id))).body.paypal_email, '*****.com', 'untouched');
  const [links] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from onboarding_links where affiliate_id = ${affiliate.id}`;
  t.equal(links!.n, 0, 'no link was made');
});

t.test('an onboarding link is single use even when submitted twice at once, and is stored only hashed', async (t) => {
  const { client } = await platform.merchant();
  const affiliate = await createAffiliate(client, 'twice@example.com');
  const link = await client.post(onboardingLinksPath(affiliate.id));
  const path = new URL(link.body.url).pathname;
  const token = path.split('/').pop()!;
  const form = new URLSearchParams({
    form_type: 'W-9',
    legal_name: 'Tw Ice',
    signature_name: 'Tw Ice',
    signed_on: '2026-01-05',
    address_line1: '1 A St',
    address_city: 'Reno',
    address_region: 'NV',
    address_postal_code: '89501',
    address_country: 'US',
    tax_classification: 'individual',
    tin_type: 'ein',
    tin: '12-3456789',
    method: 'paypal',
    paypal_email: 'twice@example.com',
  }).toString();
  const post = () =>
    rawRequest(platform.baseUrl, 'POST', path, { 'content-type': 'application/x-www-form-urlencoded' }, form);
  const answers = await Promise.all([post(), post(), post()]);
  t.same(
    answers.map((a) => a.status).sort(),
    [200, 410, 410],
    'one submission is stored, the others find the link used',
  );
  const forms = await client.get(taxFormsPath(affiliate.id));
  t.equal(forms.body.data.length, 1, 'one form');
  const stored = await platform.sql<{ row: string }[]>`select t::text as row from onboarding_links t`;
  t.notOk(
    stored.some((r) => r.row.includes(token)),
    'the token itself is stored nowhere',
  );
  for (const a of answers) t.notMatch(a.text, /123456789|12-3456789/);
});
