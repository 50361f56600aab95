import t from 'tap';
import { createAffiliate } from '../events/setup.ts';
import { holdRows } from '../helpers/locks.ts';
import { startPlatform } from '../helpers/platform.ts';
import { payoutDetailsPath, payoutVaultRows } from './setup.ts';

// Where an affiliate's money goes, written by PUT payout_details in one transaction: the vault row, the affiliate's
// reference to it, the old row superseded, the audit row. A PUT takes no Idempotency-Key (docs/API.md: POSTs do):
// sent again, it sets the same details again. Sent twice, stopped half-way, raced, timed out and retried: the
// details in force are always one request's whole, with one vault row in use and one audit row per request that
// took effect.

const platform = await startPlatform(t);
const { client, id: merchantId } = await platform.merchant();
const paypal = (email: string) => ({ method: 'paypal', paypal_email: email });
const put = (affiliateId: string, body: unknown) => client.request('PUT', payoutDetailsPath(affiliateId), { body });

/** The affiliate's vault rows (in use or superseded) and audit rows, oldest first. */
async function written(affiliateId: string) {
  const vault = await payoutVaultRows(platform.sql, merchantId, affiliateId);
  // In the order the changes took effect: seq is drawn under the affiliate's row lock (migration 067), while
  // changed_at is when a change's transaction began, which for raced changes can be in another order.
  const audit = await platform.sql<{ before: unknown; after: unknown }[]>`
    select masked_before as before, masked_after as after from payout_details_changes
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId} order by seq`;
  return { vault, audit: [...audit] };
}
const replaced = [
  { in_use: false, superseded: true },
  { in_use: true, superseded: false },
];

t.test('sent twice: the same details in force, the first vault row superseded, each request audited', async (t) => {
  const affiliate = await createAffiliate(client, 'twice-details@example.com');
  const first = await put(affiliate.id, paypal('twice@example.com'));
  t.equal(first.status, 200, first.text);
  const again = await put(affiliate.id, paypal('twice@example.com'));
  t.equal(again.status, 200, again.text);
  const { updated_at: _at, ...details } = first.body as Record<string, unknown>;
  t.match(again.body, details, 'the same details');
  const { vault, audit } = await written(affiliate.id);
  t.strictSame(vault, replaced, 'one vault row in use');
  t.same(
    audit.map((a) => [a.before, a.after]),
    [
      [null, details],
      [details, details],
    ],
  );
});

t.test('stopped half-way (timed out on the audit row): 503 and nothing kept; the retry does it once', async (t) => {
  const affiliate = await createAffiliate(client, 'half-details@example.com');
  t.equal((await put(affiliate.id, paypal('before@example.com'))).status, 200);
  // The audit row is the transaction's last write: held back, the vault row and the new reference are already
  // written when the service's lock timeout ends the transaction.
  const release = await holdRows(platform.sql, (tx) => tx`lock table payout_details_changes in exclusive mode`);
  const cut = await put(affiliate.id, paypal('after@example.com'));
  await release();
  t.equal(cut.status, 503, cut.text);
  t.equal(cut.body.error.code, 'UNAVAILABLE');
  t.ok(cut.headers.get('retry-after'), 'with Retry-After');
  const untouched = await written(affiliate.id);
  t.strictSame(untouched.vault, [{ in_use: true, superseded: false }], 'no vault row kept, the old one in use');
  t.equal(untouched.audit.length, 1, 'no audit row kept');

  const retried = await put(affiliate.id, paypal('after@example.com'));
  t.equal(retried.status, 200, retried.text);
  const { vault, audit } = await written(affiliate.id);
  t.strictSame(vault, replaced, 'the old row superseded, the new one in use');
  t.equal(audit.length, 2, 'one audit row per request that took effect');
  t.same(audit[1]!.before, audit[0]!.after);
});

t.test('raced: eight changes at once take effect one after another, each audited from the one before', async (t) => {
  const affiliate = await createAffiliate(client, 'raced-details@example.com');
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => put(affiliate.id, paypal(`raced${i}@example${i}.com`))),
  );
  t.same(
    answers.map((a) => a.status),
    Array(8).fill(200),
  );
  const { vault, audit } = await written(affiliate.id);
  t.equal(vault.filter((v) => v.in_use).length, 1, 'one vault row in use');
  t.equal(vault.filter((v) => !v.superseded).length, 1, 'and only it not superseded');
  t.equal(audit.length, 8, 'eight audit rows');
  t.equal(audit[0]!.before, null, 'the first from nothing');
  for (let i = 1; i < audit.length; i++) t.same(audit[i]!.before, audit[i - 1]!.after, `change ${i + 1} from ${i}`);
  const { updated_at: _at, ...inForce } = (await client.get(payoutDetailsPath(affiliate.id))).body;
  t.same(inForce, audit[7]!.after, 'the details in force are the last change');
});

t.test("another merchant's key gets 404 and changes nothing", async (t) => {
  const affiliate = await createAffiliate(client, 'owned-details@example.com');
  const other = await platform.merchant();
  const res = await other.client.request('PUT', payoutDetailsPath(affiliate.id), { body: paypal('x@example.com') });
  t.equal(res.status, 404);
  t.strictSame(await written(affiliate.id), { vault: [], audit: [] });
});
