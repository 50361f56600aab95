import { findAffiliateView, presentAffiliate } from '@platform/shared/affiliate-view';
import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { OutboxEventType } from '@platform/shared/catalogue';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { settingsFromText, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { Clock } from '../deps.ts';
import { commissionEventData } from '../present.ts';
import { setAffiliateTier, type TierRow } from '../queries/affiliates.ts';
import { insertEventCommissions, voidCommissions, voidOrderCommissions } from '../queries/commissions.ts';
import {
  claimAndReadContext,
  claimConversion,
  lockKeysAndReadSettings,
  reverseOrderRevenue,
  type ConversionContext,
} from '../queries/conversions.ts';
import { insertFraudFlag, type FraudRule } from '../queries/fraud-flags.ts';
import { addAttributedRevenue, countConversionRevenue } from '../queries/stats.ts';
import type { ConversionEnvelope } from './envelope.ts';
import { formatAmount, toDecimal } from './money.ts';
import { computeCommissionLines, MAX_LEVELS } from './rules.ts';

export type ProcessOutcome =
  | { kind: 'processed'; created: number; voided: number; flags: number; promoted: boolean }
  /** Processed before: a JetStream redelivery, or the same event published twice. Nothing was changed. */
  | { kind: 'duplicate' }
  | { kind: 'unknown_merchant' };

interface FraudHit {
  rule: FraudRule;
  details: Record<string, unknown>;
}

/** The outbox events of a transaction, written with one statement before it commits, in the order they happened. */
type Outbox = { merchantId: string; type: OutboxEventType; data: Record<string, unknown> }[];

const nothing = { kind: 'processed', created: 0, voided: 0, flags: 0, promoted: false } as const;

/** The advisory-lock keys of a conversion (see lockKeysAndReadSettings), qualified by its merchant. */
function lockKeysOf(envelope: ConversionEnvelope): string[] {
  const d = envelope.data;
  const keys = [`order:${d.external_id}`];
  if (d.visit?.id) keys.push(`visit:${d.visit.id}`);
  if (d.visit?.ip_hash) keys.push(`ip:${d.visit.ip_hash}`);
  // Conversions of one affiliate touch the same rows (the affiliate, its stats): locking it up front, with the rest
  // in sorted order, keeps transactions that process several conversions from deadlocking on those rows.
  if (d.affiliate_id) keys.push(`aff:${d.affiliate_id}`);
  return keys.map((k) => `${envelope.merchant_id}:${k}`);
}

/**
 * Everything one `conversion.recorded` causes: commissions (direct and up to five ancestors), their outbox events,
 * fraud flags, attributed revenue and tier promotion; or, for a refund, the voiding of the order's commissions.
 * See processConversions.
 */
export async function processConversion(
  sql: Sql,
  envelope: ConversionEnvelope,
  ctx: { now: Clock; publicBaseUrl: string },
): Promise<ProcessOutcome> {
  const [outcome] = await processConversions(sql, [envelope], ctx);
  return outcome!;
}

/**
 * Processes several conversions in one transaction (one commit, one lock statement, one outbox statement for
 * all of them), in the order given; answers one outcome per envelope. The advisory locks of every conversion are
 * taken first, together, in sorted order; then each conversion is processed as if alone: its first write claims
 * the event in processed_conversions, so a redelivered or duplicated message (even one in the same batch) finds it
 * claimed and changes nothing: whatever JetStream redelivers, an event counts once. A failure rolls back the
 * whole batch (the caller retries its messages one by one).
 */
export async function processConversions(
  sql: Sql,
  envelopes: ConversionEnvelope[],
  ctx: { now: Clock; publicBaseUrl: string },
): Promise<ProcessOutcome[]> {
  const outbox: Outbox = [];
  const outcomes = await sql.begin(async (tx): Promise<ProcessOutcome[]> => {
    outbox.length = 0;
    const at = ctx.now();
    const merchantIds = [...new Set(envelopes.map((e) => e.merchant_id))];
    const settingsText = await lockKeysAndReadSettings(tx, envelopes.flatMap(lockKeysOf), merchantIds);
    const results: ProcessOutcome[] = [];
    for (const envelope of envelopes) {
      const text = settingsText.get(envelope.merchant_id);
      results.push(text === undefined ? { kind: 'unknown_merchant' } : await processOne(tx, envelope, settingsFromText(envelope.merchant_id, text), at, ctx.publicBaseUrl, outbox));
    }
    await enqueueEvents(tx, outbox);
    return results;
  });
  if (outbox.length > 0) outboxCommitted(sql);
  return outcomes;
}

async function processOne(
  tx: Queryable,
  envelope: ConversionEnvelope,
  settings: MerchantSettings,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<ProcessOutcome> {
  const merchantId = envelope.merchant_id;
  const d = envelope.data;
  const visitId = d.visit?.id ?? null;
  const ipHash = d.visit?.ip_hash ?? null;
  const occurredAt = new Date(d.created_at);
  const claim = {
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
  };
  if (d.event_type === 'refund' || !d.affiliate_id) {
    if (!(await claimConversion(tx, claim))) return { kind: 'duplicate' };
    return d.event_type === 'refund' ? refundOrder(tx, merchantId, d.external_id, at, outbox) : nothing;
  }

  const context = await claimAndReadContext(tx, {
    ...claim,
    affiliateId: d.affiliate_id,
    customerEmail: d.customer_email,
    fingerprint: d.visit?.fingerprint ?? null,
    maxLevels: Math.min(MAX_LEVELS, settings.level_rates.length),
  });
  if (!context.claimed) return { kind: 'duplicate' };
  const affiliate = context.affiliate;
  // Suspended affiliates earn nothing, and their conversions do not count toward tiers.
  if (!affiliate || affiliate.status === 'suspended') return nothing;

  const hits = fraudHits(affiliate, context, visitId, settings);
  const flagged = hits.length > 0;
  const refunded = context.refunded;

  const lines = computeCommissionLines({
    eventType: d.event_type,
    amount: d.amount,
    currency: d.currency,
    settings,
    rates: { customRate: affiliate.custom_commission_rate, tierRate: affiliate.tier_rate },
  });
  // A suspended ancestor earns nothing, but the levels above it still count from the event's affiliate.
  const earners = new Map<number, string>([[0, affiliate.id]]);
  for (const a of context.ancestors) {
    if (a.status !== 'suspended') earners.set(a.level, a.id);
  }

  const created = await insertEventCommissions(
    tx,
    { merchantId, eventId: d.event_id, orderId: d.external_id, currency: d.currency, held: flagged && settings.fraud_action === 'hold', createdAt: at },
    lines.flatMap((line) => {
      const earner = earners.get(line.level);
      return earner
        ? [{ id: newId('com', at.getTime()), affiliateId: earner, level: line.level, rate: line.rate, amount: formatAmount(line.amount, d.currency) }]
        : [];
    }),
  );
  for (const row of created) outbox.push({ merchantId, type: 'commission.created', data: commissionEventData(row) });

  // A refund that overtook its order voids the order's commissions as they are created.
  const voidReason = refunded ? 'refund' : flagged && settings.fraud_action === 'void' ? 'fraud' : null;
  const voided = voidReason ? await voidCommissions(tx, merchantId, created.map((c) => c.id), voidReason, at) : [];
  for (const row of voided) outbox.push({ merchantId, type: 'commission.voided', data: commissionEventData(row) });

  let flags = 0;
  for (const hit of hits) {
    if (!(await insertFraudFlag(tx, { merchantId, affiliateId: affiliate.id, eventId: d.event_id, rule: hit.rule, details: hit.details, at }))) continue;
    flags++;
    outbox.push({ merchantId, type: 'fraud.flagged', data: { affiliate_id: affiliate.id, event_id: d.event_id, rule: hit.rule, details: hit.details } });
  }

  // Only clean, unrefunded conversions count toward tiers: a flagged one must not promote its affiliate.
  let promoted = false;
  if (!flagged && !refunded) {
    const tierLookup = d.currency === settings.currency && toDecimal(d.amount).gt(0);
    const counted = await countConversionRevenue(tx, {
      merchantId,
      affiliateId: affiliate.id,
      eventId: d.event_id,
      currency: d.currency,
      amount: d.amount,
      at,
      tierLookup,
    });
    if (tierLookup) promoted = await promoteIfThresholdCrossed(tx, merchantId, affiliate, counted.reached, at, publicBaseUrl, outbox);
  }
  return { kind: 'processed', created: created.length, voided: voided.length, flags, promoted };
}

/** The fraud rules of decisions §8 that this conversion trips (the counts were read with its claim). */
function fraudHits(
  affiliate: NonNullable<ConversionContext['affiliate']>,
  counts: { byVisit: number; byIp: number },
  visitId: string | null,
  settings: MerchantSettings,
): FraudHit[] {
  const hits: FraudHit[] = [];
  // The details say what matched, not the matching values: the webhook must not carry the e-mail or fingerprint.
  if (affiliate.email_matches) hits.push({ rule: 'self_referral', details: { matched: 'customer_email' } });
  if (affiliate.fingerprint_matches) hits.push({ rule: 'own_fingerprint', details: { matched: 'visit_fingerprint', visit_id: visitId } });
  const limit = settings.fraud_max_conversions_per_hour;
  if (counts.byVisit > limit || counts.byIp > limit) {
    const byVisit = counts.byVisit > limit;
    hits.push({
      rule: 'conversion_velocity',
      details: {
        source: byVisit ? 'visit' : 'ip',
        ...(byVisit ? { visit_id: visitId } : {}),
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
  affiliate: NonNullable<ConversionContext['affiliate']>,
  reached: TierRow | undefined,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<boolean> {
  if (!reached || reached.id === affiliate.tier_id) return false;
  if (affiliate.tier_threshold !== null && toDecimal(affiliate.tier_threshold).gte(toDecimal(reached.threshold))) return false;
  await setAffiliateTier(tx, merchantId, affiliate.id, reached.id, at);
  const view = await findAffiliateView(tx, merchantId, affiliate.id);
  outbox.push({
    merchantId,
    type: 'affiliate.tier_promoted',
    data: { ...presentAffiliate(view!, publicBaseUrl), previous_tier_id: affiliate.tier_id },
  });
  return true;
}

/**
 * A refund voids every pending or approved commission of the order (paid ones stay: recovering paid money is a
 * payout matter) and takes the order's revenue back out of the affiliates' totals. Tiers are not lowered.
 */
async function refundOrder(tx: Queryable, merchantId: string, orderId: string, at: Date, outbox: Outbox): Promise<ProcessOutcome> {
  const voided = await voidOrderCommissions(tx, merchantId, orderId, 'refund', at);
  for (const row of voided) outbox.push({ merchantId, type: 'commission.voided', data: commissionEventData(row) });
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
