import { findAffiliateView, presentAffiliate } from '@platform/shared/affiliate-view';
import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { enqueueEvent } from '@platform/shared/outbox';
import { loadMerchantSettings, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { Clock } from '../deps.ts';
import { commissionEventData } from '../present.ts';
import { findAncestors, highestTierReached, lockEarningAffiliate, setAffiliateTier, type EarningAffiliateRow } from '../queries/affiliates.ts';
import { insertCommission, voidCommissions, voidOrderCommissions, type CommissionRow } from '../queries/commissions.ts';
import {
  claimConversion,
  busiestHour,
  lockKeys,
  markRevenueCounted,
  orderRefunded,
  reverseOrderRevenue,
} from '../queries/conversions.ts';
import { insertFraudFlag, type FraudRule } from '../queries/fraud-flags.ts';
import { addAttributedRevenue } from '../queries/stats.ts';
import type { ConversionEnvelope } from './envelope.ts';
import { formatAmount, toDecimal } from './money.ts';
import { computeCommissionLines } from './rules.ts';

export type ProcessOutcome =
  | { kind: 'processed'; created: number; voided: number; flags: number; promoted: boolean }
  /** Processed before: a JetStream redelivery, or the same event published twice. Nothing was changed. */
  | { kind: 'duplicate' }
  | { kind: 'unknown_merchant' };

interface FraudHit {
  rule: FraudRule;
  details: Record<string, unknown>;
}

const nothing = { kind: 'processed', created: 0, voided: 0, flags: 0, promoted: false } as const;

/**
 * Everything one `conversion.recorded` causes, in one transaction: commissions (direct and up to five ancestors),
 * their outbox events, fraud flags, attributed revenue and tier promotion; or, for a refund, the voiding of the
 * order's commissions. The first write claims the event in processed_conversions, so a redelivered or duplicated
 * message finds it claimed and changes nothing: whatever JetStream redelivers, an event counts once.
 */
export async function processConversion(
  sql: Sql,
  envelope: ConversionEnvelope,
  ctx: { now: Clock; publicBaseUrl: string },
): Promise<ProcessOutcome> {
  const merchantId = envelope.merchant_id;
  const d = envelope.data;
  return sql.begin(async (tx): Promise<ProcessOutcome> => {
    const at = ctx.now();
    const visitId = d.visit?.id ?? null;
    const ipHash = d.visit?.ip_hash ?? null;
    const lockedKeys = [`order:${d.external_id}`];
    if (visitId) lockedKeys.push(`visit:${visitId}`);
    if (ipHash) lockedKeys.push(`ip:${ipHash}`);
    await lockKeys(tx, merchantId, lockedKeys);

    const settings = await loadMerchantSettings(tx, merchantId);
    if (!settings) return { kind: 'unknown_merchant' };
    const occurredAt = new Date(d.created_at);
    const claimed = await claimConversion(tx, {
      merchantId,
      eventId: d.event_id,
      eventType: d.event_type,
      externalId: d.external_id,
      affiliateId: d.affiliate_id,
      amount: d.amount,
      currency: d.currency,
      visitId,
      ipHash,
      occurredAt,
      processedAt: at,
    });
    if (!claimed) return { kind: 'duplicate' };

    if (d.event_type === 'refund') return refundOrder(tx, merchantId, d.external_id, at);
    if (!d.affiliate_id) return nothing;

    const affiliate = await lockEarningAffiliate(tx, merchantId, d.affiliate_id, {
      email: d.customer_email,
      fingerprint: d.visit?.fingerprint ?? null,
    });
    // Suspended affiliates earn nothing, and their conversions do not count toward tiers.
    if (!affiliate || affiliate.status === 'suspended') return nothing;

    const hits = await fraudHits(tx, merchantId, affiliate, { visitId, ipHash, occurredAt }, settings);
    const flagged = hits.length > 0;
    const refunded = await orderRefunded(tx, merchantId, d.external_id);

    const lines = computeCommissionLines({
      eventType: d.event_type,
      amount: d.amount,
      currency: d.currency,
      settings,
      rates: { customRate: affiliate.custom_commission_rate, tierRate: affiliate.tier_rate },
    });
    const maxLevel = Math.max(0, ...lines.map((l) => l.level));
    // A suspended ancestor earns nothing, but the levels above it still count from the event's affiliate.
    const earners = new Map<number, string>([[0, affiliate.id]]);
    for (const a of await findAncestors(tx, merchantId, affiliate.id, maxLevel)) {
      if (a.status !== 'suspended') earners.set(a.level, a.id);
    }

    const created: CommissionRow[] = [];
    for (const line of lines) {
      const earner = earners.get(line.level);
      if (!earner) continue;
      const row = await insertCommission(tx, {
        id: newId('com', at.getTime()),
        merchantId,
        affiliateId: earner,
        eventId: d.event_id,
        orderId: d.external_id,
        level: line.level,
        rate: line.rate,
        amount: formatAmount(line.amount, d.currency),
        currency: d.currency,
        held: flagged && settings.fraud_action === 'hold',
        createdAt: at,
      });
      if (!row) continue;
      created.push(row);
      await enqueueEvent(tx, merchantId, 'commission.created', commissionEventData(row));
    }

    // A refund that overtook its order voids the order's commissions as they are created.
    const voidReason = refunded ? 'refund' : flagged && settings.fraud_action === 'void' ? 'fraud' : null;
    const voided = voidReason ? await voidCommissions(tx, merchantId, created.map((c) => c.id), voidReason, at) : [];
    for (const row of voided) await enqueueEvent(tx, merchantId, 'commission.voided', commissionEventData(row));

    let flags = 0;
    for (const hit of hits) {
      if (!(await insertFraudFlag(tx, { merchantId, affiliateId: affiliate.id, eventId: d.event_id, rule: hit.rule, details: hit.details, at }))) continue;
      flags++;
      await enqueueEvent(tx, merchantId, 'fraud.flagged', { affiliate_id: affiliate.id, event_id: d.event_id, rule: hit.rule, details: hit.details });
    }

    // Only clean, unrefunded conversions count toward tiers: a flagged one must not promote its affiliate.
    let promoted = false;
    if (!flagged && !refunded) {
      const total = await addAttributedRevenue(tx, { merchantId, affiliateId: affiliate.id, currency: d.currency, amount: d.amount, conversions: 1, at });
      await markRevenueCounted(tx, merchantId, d.event_id, d.amount);
      if (d.currency === settings.currency && toDecimal(d.amount).gt(0)) {
        promoted = await promoteIfThresholdCrossed(tx, merchantId, affiliate, total, at, ctx.publicBaseUrl);
      }
    }
    return { kind: 'processed', created: created.length, voided: voided.length, flags, promoted };
  });
}

/** The fraud rules of decisions §8 that this conversion trips. */
async function fraudHits(
  tx: Queryable,
  merchantId: string,
  affiliate: EarningAffiliateRow,
  visit: { visitId: string | null; ipHash: string | null; occurredAt: Date },
  settings: MerchantSettings,
): Promise<FraudHit[]> {
  const hits: FraudHit[] = [];
  // The details say what matched, not the matching values: the webhook must not carry the e-mail or fingerprint.
  if (affiliate.email_matches) hits.push({ rule: 'self_referral', details: { matched: 'customer_email' } });
  if (affiliate.fingerprint_matches) hits.push({ rule: 'own_fingerprint', details: { matched: 'visit_fingerprint', visit_id: visit.visitId } });
  const limit = settings.fraud_max_conversions_per_hour;
  const counts = await busiestHour(tx, merchantId, visit.occurredAt, visit);
  if (counts.byVisit > limit || counts.byIp > limit) {
    const byVisit = counts.byVisit > limit;
    hits.push({
      rule: 'conversion_velocity',
      details: {
        source: byVisit ? 'visit' : 'ip',
        ...(byVisit ? { visit_id: visit.visitId } : {}),
        conversions_in_one_hour: byVisit ? counts.byVisit : counts.byIp,
        limit,
      },
    });
  }
  return hits;
}

/**
 * Crossing a tier threshold moves the affiliate up to the highest tier its revenue (in the merchant's currency)
 * has reached. It never moves an affiliate down or sideways: a tier set by hand above the revenue stays.
 */
async function promoteIfThresholdCrossed(
  tx: Queryable,
  merchantId: string,
  affiliate: EarningAffiliateRow,
  revenue: string,
  at: Date,
  publicBaseUrl: string,
): Promise<boolean> {
  const reached = await highestTierReached(tx, merchantId, revenue);
  if (!reached || reached.id === affiliate.tier_id) return false;
  if (affiliate.tier_threshold !== null && toDecimal(affiliate.tier_threshold).gte(toDecimal(reached.threshold))) return false;
  await setAffiliateTier(tx, merchantId, affiliate.id, reached.id, at);
  const view = await findAffiliateView(tx, merchantId, affiliate.id);
  await enqueueEvent(tx, merchantId, 'affiliate.tier_promoted', {
    ...presentAffiliate(view!, publicBaseUrl),
    previous_tier_id: affiliate.tier_id,
  });
  return true;
}

/**
 * A refund voids every pending or approved commission of the order (paid ones stay: recovering paid money is a
 * payout matter) and takes the order's revenue back out of the affiliates' totals. Tiers are not lowered.
 */
async function refundOrder(tx: Queryable, merchantId: string, orderId: string, at: Date): Promise<ProcessOutcome> {
  const voided = await voidOrderCommissions(tx, merchantId, orderId, 'refund', at);
  for (const row of voided) await enqueueEvent(tx, merchantId, 'commission.voided', commissionEventData(row));
  const reversed = await reverseOrderRevenue(tx, merchantId, orderId);
  reversed.sort((a, b) => (a.affiliate_id < b.affiliate_id ? -1 : a.affiliate_id > b.affiliate_id ? 1 : 0));
  for (const r of reversed) {
    await addAttributedRevenue(tx, {
      merchantId,
      affiliateId: r.affiliate_id,
      currency: r.currency,
      amount: toDecimal(r.revenue_counted).negated().toFixed(),
      conversions: -1,
      at,
    });
  }
  return { kind: 'processed', created: 0, voided: voided.length, flags: 0, promoted: false };
}
