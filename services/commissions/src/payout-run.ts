import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { hasValidTaxForm } from '@platform/shared/payee';
import { loadMerchantSettings, withDefaults } from '@platform/shared/schemas/merchant-settings';
import type { Clock } from './deps.ts';
import { insertAdjustments, openClawbacks } from './queries/clawbacks.ts';
import {
  findPayout,
  insertPayouts,
  lockPayoutCreation,
  payableCommissions,
  payoutTotalsBetween,
  releaseHoldsWithValidForms,
  type NewPayout,
  type PayoutRow,
} from './queries/payouts.ts';
import { deductClawbacks } from './domain/clawbacks.ts';
import { calendarYear, groupPayouts, payoutHold, scheduledPeriod } from './domain/payouts.ts';

/**
 * Creates the merchant's payouts in the caller's transaction: one per affiliate and currency grouping its approved
 * commissions that are in no open payout, when their total reaches min_payout; each held for a tax form when the
 * merchant's tax_form_policy says so (created pending with held_reason, not left out: the merchant sees what is owed
 * and why it waits). Concurrent calls for one merchant run one after the other (an advisory lock), so a commission is
 * grouped once. `affiliateIds` limits it to those affiliates (any status); by default every approved affiliate. Open
 * clawbacks of an affiliate are deducted from its payouts in their currency (domain/clawbacks.ts).
 */
export async function createPayouts(
  tx: Queryable,
  merchantId: string,
  at: Date,
  affiliateIds?: string[],
): Promise<PayoutRow[]> {
  const settings = await loadMerchantSettings(tx, merchantId);
  if (!settings) return [];
  await lockPayoutCreation(tx, merchantId);
  const gross = groupPayouts(await payableCommissions(tx, merchantId, affiliateIds), settings.min_payout);
  if (gross.length === 0) return [];
  // Money clawed back for commissions voided after they were paid comes off these payouts first.
  const open = await openClawbacks(tx, merchantId, [...new Set(gross.map((g) => g.affiliateId))]);
  const groups = deductClawbacks(gross, open, settings.min_payout);
  if (groups.length === 0) return [];
  const year = calendarYear(at);
  const totals = await payoutTotalsBetween(
    tx,
    merchantId,
    [...new Set(groups.map((g) => g.affiliateId))],
    year.start,
    year.end,
  );
  const formOnFile = new Map<string, boolean>();
  const payouts: NewPayout[] = [];
  for (const group of groups) {
    const hold = { yearTotal: totals.get(`${group.affiliateId} ${group.currency}`) ?? '0', amount: group.amount };
    let heldReason = payoutHold(settings.tax_form_policy, { ...hold, hasValidTaxForm: false });
    // The form is looked up only when it matters: most payouts are held by no policy.
    if (heldReason) {
      let onFile = formOnFile.get(group.affiliateId);
      if (onFile === undefined) {
        onFile = await hasValidTaxForm(tx, merchantId, group.affiliateId);
        formOnFile.set(group.affiliateId, onFile);
      }
      heldReason = payoutHold(settings.tax_form_policy, { ...hold, hasValidTaxForm: onFile });
    }
    payouts.push({ ...group, id: newId('po', at.getTime()), heldReason });
  }
  const rows = await insertPayouts(tx, merchantId, payouts, at);
  await insertAdjustments(
    tx,
    merchantId,
    payouts.flatMap((p, i) => groups[i]!.deductions.map((d) => ({ payoutId: p.id, ...d }))),
    at,
  );
  // Read back with their adjustments when they have any.
  if (groups.every((g) => g.deductions.length === 0)) return rows;
  return Promise.all(rows.map(async (r) => (await findPayout(tx, merchantId, r.id))!));
}

/**
 * One pass of the monthly schedule: for every merchant whose payout_day has come this month (UTC) and whose month has
 * not run yet, claims the month (a row in payout_schedule_runs) and creates its payouts in the same transaction, so
 * replicas running passes at once create them once, and a pass that fails leaves the month to the next. Also releases
 * holds whose affiliate has a valid tax form by now. Answers how many payouts it created.
 */
export async function runPayoutSchedule(sql: Sql, now: Clock, log: Logger): Promise<number> {
  const at = now();
  const released = await releaseHoldsWithValidForms(sql);
  if (released > 0) log.info('payouts released: a tax form is on file', { count: released });
  const merchants = await sql<{ id: string; settings: unknown }[]>`
    select id, settings from merchants where settings ? 'payout_day' and jsonb_typeof(settings->'payout_day') = 'number'`;
  let created = 0;
  for (const merchant of merchants) {
    const period = scheduledPeriod(withDefaults(merchant.settings).payout_day, at);
    if (!period) continue;
    // One merchant's failure (its month stays unclaimed, for the next pass) holds back no other merchant.
    created += await runMonth(sql, merchant.id, period, at).catch((err: unknown) => {
      log.error('scheduled payouts failed; the next pass tries again', { merchant_id: merchant.id, period, err });
      return 0;
    });
  }
  return created;
}

/** Claims the merchant's month and creates its payouts in one transaction; 0 when another run claimed it first. */
async function runMonth(sql: Sql, merchantId: string, period: string, at: Date): Promise<number> {
  return sql.begin(async (tx) => {
    const [claimed] = await tx`
      insert into payout_schedule_runs (merchant_id, period, ran_at, payouts)
      values (${merchantId}, ${period}, ${at}, 0)
      on conflict (merchant_id, period) do nothing
      returning merchant_id`;
    if (!claimed) return 0;
    const payouts = await createPayouts(tx, merchantId, at);
    await tx`
      update payout_schedule_runs set payouts = ${payouts.length}
      where merchant_id = ${merchantId} and period = ${period}`;
    return payouts.length;
  });
}
