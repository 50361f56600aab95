import t from 'tap';
import { loadAffiliatesConfig } from '@platform/affiliates/config';
import { startAffiliatesService } from '@platform/affiliates/service';
import { createAffiliate } from '../events/setup.ts';
import { captureLogger, eventually, startPlatform } from '../helpers/platform.ts';
import { payoutDetailsPath, payoutHistoryPath, putPayoutDetails, taxFormsPath, w9 } from './setup.ts';

// Vault rows replaced by newer ones are deleted VAULT_SUPERSEDED_RETENTION_DAYS after being replaced, by the
// affiliates service (at start, then hourly); a row something still references is never deleted.

const platform = await startPlatform(t);
const { sql } = platform;
const merchant = await platform.merchant();
const other = await platform.merchant();

const paypal = (n: number) => ({ method: 'paypal', paypal_email: `payee${n}@example.com` });

/** The affiliate's vault rows of `kind`, oldest first. */
const vaultRows = (affiliateId: string, kind: string) =>
  sql<{ id: string; superseded_at: Date | null }[]>`
    select id, superseded_at from vault_secrets where affiliate_id = ${affiliateId} and kind = ${kind}
    order by created_at, id`;

const supersededDaysAgo = (id: string, days: number) =>
  sql`update vault_secrets set superseded_at = now() - make_interval(days => ${days}) where id = ${id}`;

t.test('superseded secrets past the retention are deleted; younger and referenced ones stay', async (t) => {
  const jane = await createAffiliate(merchant.client, 'jane@example.com');
  for (const n of [1, 2, 3]) t.equal((await putPayoutDetails(merchant.client, jane.id, paypal(n))).status, 200);
  const [old, recent, current] = await vaultRows(jane.id, 'payout_details');
  t.ok(old!.superseded_at && recent!.superseded_at && !current!.superseded_at, 'two replaced, one in use');
  await supersededDaysAgo(old!.id, 31);
  await supersededDaysAgo(recent!.id, 29);
  // Marked superseded by mistake while still in use: the reference keeps it.
  await supersededDaysAgo(current!.id, 400);

  // A superseded form keeps its TIN as long as the form: the TIN row is referenced.
  t.equal((await merchant.client.post(taxFormsPath(jane.id), w9('123-45-6789'))).status, 201);
  t.equal((await merchant.client.post(taxFormsPath(jane.id), w9('123-45-6780'))).status, 201);
  const [oldTin] = await vaultRows(jane.id, 'tin');
  t.ok(oldTin!.superseded_at, "the first form's TIN is superseded");
  await supersededDaysAgo(oldTin!.id, 400);

  // Every merchant's rows: the retention is the platform's.
  const max = await createAffiliate(other.client, 'max@example.com');
  for (const n of [1, 2]) await putPayoutDetails(other.client, max.id, paypal(n));
  const [othersOld] = await vaultRows(max.id, 'payout_details');
  await supersededDaysAgo(othersOld!.id, 90);

  const captured = captureLogger('affiliates');
  const service = await startAffiliatesService(
    loadAffiliatesConfig({ ...platform.env, VAULT_SUPERSEDED_RETENTION_DAYS: '30' }),
    captured.log,
  );
  t.teardown(() => service.close());
  const gone = [old!.id, othersOld!.id];
  const kept = [recent!.id, current!.id, oldTin!.id];
  await eventually(
    async () => {
      const rows = await sql`select id from vault_secrets where id in ${sql(gone)}`;
      return rows.length === 0 || undefined;
    },
    10_000,
    'the purge at start',
  );
  const left = await sql<{ id: string }[]>`select id from vault_secrets where id in ${sql(kept)}`;
  t.same(left.map((r) => r.id).sort(), [...kept].sort(), 'younger, in use, or referenced by a form: kept');
  t.ok(
    captured.lines.some((l) => /superseded vault secrets past the retention deleted/.test(l) && /"count":2/.test(l)),
    'the purge is logged with its count',
  );

  // What is shown is unchanged: the audit keeps masked copies, the forms their TINs.
  t.match((await merchant.client.get(payoutDetailsPath(jane.id))).body, {
    method: 'paypal',
    paypal_email: '*****.com',
  });
  const history = await merchant.client.get(payoutHistoryPath(jane.id));
  t.equal(history.body.data.length, 3, 'the whole history, after the purge');
  t.match(history.body.data[2], { before: null, after: { method: 'paypal', paypal_email: '*****.com' } });
  const forms = await merchant.client.get(taxFormsPath(jane.id));
  t.same(
    forms.body.data.map((f: { status: string; tin_masked: string }) => [f.status, f.tin_masked]),
    [
      ['valid', '*****6780'],
      ['superseded', '*****6789'],
    ],
  );
});

t.test('the retention is at least a day, 30 days unless told', async (t) => {
  t.throws(
    () => loadAffiliatesConfig({ ...platform.env, VAULT_SUPERSEDED_RETENTION_DAYS: '0' }),
    /VAULT_SUPERSEDED_RETENTION_DAYS/,
  );
  t.equal(loadAffiliatesConfig({ ...platform.env }).VAULT_SUPERSEDED_RETENTION_DAYS, 30);
});
