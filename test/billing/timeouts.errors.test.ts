import { randomUUID } from 'node:crypto';
import t from 'tap';
import { upgrade, type AskPayments } from '@platform/gateway/surfaces/dashboard/billing-charge';
import { renewDue, retryPastDue, type RenewalDeps } from '@platform/gateway/surfaces/dashboard/billing-renewals';
import { ApiError } from '@platform/shared/errors';
import { billingOwner, GOOD_CARD, renewalTestDeps } from '../helpers/billing.ts';
import { sleep } from '../helpers/platform.ts';
import { startPayments } from '../payments/setup.ts';

/**
 * The money paths when the payments service's answer is lost (it did the work; the gateway gave up waiting): the
 * upgrade and the renewal are left claimed with their intent recorded, and the retry after the lease reads that
 * intent and applies it, never charging a second time. A card update racing the renewal job charges the unpaid
 * month once.
 */
const { platform } = await startPayments(t);
const deps = await renewalTestDeps(t, platform);
const DAY = 86_400_000;
// A lease of a second (three times an RPC bound of 0, and a second): the retry can take the claim over soon.
const RPC_TIMEOUT_MS = 0;
const LEASE_MS = 1000;

/**
 * The real payments service, whose answer to the first confirmation of `merchantId`'s payment intent is lost after it
 * confirmed (other merchants' charges, due in the same pass, go through).
 */
function losingFirstConfirm(ask: AskPayments, merchantId: string): { ask: AskPayments; lost: () => boolean } {
  let lost = false;
  const theirs = new Set<string>();
  return {
    lost: () => lost,
    ask: async (operation, path, params) => {
      const answer = await ask<{ id: string }>(operation, path, params);
      const metadata = params['metadata'] as { merchant_id?: string } | undefined;
      if (operation === 'create_payment_intent' && metadata?.merchant_id === merchantId) theirs.add(answer.id);
      if (operation === 'confirm_payment_intent' && theirs.has(path['id']!) && !lost) {
        lost = true;
        throw new ApiError('UNAVAILABLE', 'The payments service did not answer in time; try again');
      }
      return answer as never;
    },
  };
}

const periodOf = async (merchantId: string) =>
  (
    await platform.sql<{ period_end: Date | null; status: string }[]>`
      select period_end, status from billing_accounts where merchant_id = ${merchantId}`
  )[0]!;

t.test('an upgrade whose confirmation answer is lost: the retry applies it, charged once', async (t) => {
  const owner = await billingOwner(platform);
  const request = { merchantId: owner.id, plan: 'growth' as const, attempt: randomUUID(), card: GOOD_CARD };
  const losing = losingFirstConfirm(deps.ask, owner.id);
  await t.rejects(upgrade(platform.sql, losing.ask, 'sandbox', RPC_TIMEOUT_MS, request, 'test'), {
    code: 'UNAVAILABLE',
  });
  t.ok(losing.lost());
  t.equal(await owner.plan(), 'free', 'not applied while its outcome is unknown');
  // Within the lease the same attempt waits; another attempt is refused, not charged.
  await t.rejects(upgrade(platform.sql, deps.ask, 'sandbox', RPC_TIMEOUT_MS, request, 'test'), { code: 'CONFLICT' });
  await sleep(LEASE_MS + 100);
  const row = await upgrade(platform.sql, deps.ask, 'sandbox', RPC_TIMEOUT_MS, request, 'test');
  t.equal(row.status, 'succeeded');
  t.equal(await owner.plan(), 'growth');
  const intents = await owner.intents();
  t.equal(intents.length, 1, 'one payment intent');
  t.equal(intents[0]!.status, 'succeeded');
  const again = await upgrade(platform.sql, deps.ask, 'sandbox', RPC_TIMEOUT_MS, request, 'test');
  t.equal(again.id, row.id, 'asked once more: the same receipt');
  t.equal((await owner.intents()).length, 1);
});

t.test('a renewal whose confirmation answer is lost: the next pass after the lease renews, charged once', async (t) => {
  const owner = await billingOwner(platform);
  t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
  const { period_end: end } = await periodOf(owner.id);
  const losing = losingFirstConfirm(deps.ask, owner.id);
  const at = new Date(end!.getTime() + 1000);
  await renewDue({ ...deps, ask: losing.ask, leaseMs: LEASE_MS }, at);
  t.ok(losing.lost());
  t.equal((await periodOf(owner.id)).period_end!.getTime(), end!.getTime(), 'not renewed while unknown');
  t.same((await owner.charges()).map((c) => c.status).sort(), ['claimed', 'succeeded'], 'the renewal is left claimed');
  await renewDue({ ...deps, leaseMs: LEASE_MS }, at);
  t.same((await owner.charges()).map((c) => c.status).sort(), ['claimed', 'succeeded'], 'within the lease: waits');
  await sleep(LEASE_MS + 100);
  await renewDue({ ...deps, leaseMs: LEASE_MS }, at);
  const after = await periodOf(owner.id);
  t.ok(after.period_end! > end!, 'the month renewed');
  t.same(
    (await owner.charges()).map((c) => c.status),
    ['succeeded', 'succeeded'],
  );
  t.equal((await owner.intents()).length, 2, 'the upgrade and one renewal, nothing more');
});

t.test('a new card racing the renewal job: the unpaid month is charged once', async (t) => {
  for (let round = 0; round < 3; round++) {
    const owner = await billingOwner(platform);
    t.equal((await owner.upgrade({ plan: 'growth', card: GOOD_CARD })).status, 200);
    const end = new Date(Date.now() - 1000);
    await platform.sql`update billing_accounts set status = 'past_due', past_due_since = ${new Date(Date.now() - DAY)},
      period_start = ${new Date(end.getTime() - 30 * DAY)}, period_end = ${end} where merchant_id = ${owner.id}`;
    const racing: RenewalDeps = { ...deps, leaseMs: 60_000 };
    await Promise.all([renewDue(racing), retryPastDue(racing, owner.id), renewDue(racing)]);
    const paid = (await owner.charges()).filter((c) => c.status === 'succeeded');
    t.equal(paid.length, 2, 'the upgrade and the month, once');
    t.equal((await periodOf(owner.id)).status, 'active');
  }
});
