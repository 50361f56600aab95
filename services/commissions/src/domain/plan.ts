import { newId } from '@platform/shared/ids';
import type { MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { TierRow } from '../queries/affiliates.ts';
import type { ContextLookup, ConversionClaim, ConversionContext } from '../queries/conversions.ts';
import type { FraudRule } from '../queries/fraud-flags.ts';
import type { ConversionEnvelope } from './envelope.ts';
import { formatAmount, toDecimal } from './money.ts';
import { computeCommissionLines, MAX_LEVELS } from './rules.ts';

/**
 * The commission engine's decisions, without I/O: from a conversion and what was read about it (its context), the
 * commission lines, fraud hits, revenue counting and tier move it causes. process.ts reads the context,
 * applies these decisions in batches and writes what they say; test/commissions/plan.happy.test.ts checks them without a
 * database.
 */

export type ProcessOutcome =
  | { kind: 'processed'; created: number; voided: number; flags: number; promoted: boolean }
  /** Processed before: a JetStream redelivery, or the same event published twice. Nothing was changed. */
  | { kind: 'duplicate' }
  | { kind: 'unknown_merchant' };

/** The outcome of a conversion that changes nothing but its claim (no earner, or a suspended one). */
export const NOTHING: ProcessOutcome = { kind: 'processed', created: 0, voided: 0, flags: 0, promoted: false };

export interface FraudHit {
  rule: FraudRule;
  details: Record<string, unknown>;
}

export type PlannedAffiliate = NonNullable<ConversionContext['affiliate']>;

/** What an attributed conversion that was claimed now will write, decided from its context. */
export interface Plan {
  envelope: ConversionEnvelope;
  settings: MerchantSettings;
  affiliate: PlannedAffiliate;
  hits: FraudHit[];
  flagged: boolean;
  refunded: boolean;
  /** The commissions to insert (one per level that has an earner), held when a fraud rule fired and says hold. */
  lines: { id: string; affiliateId: string; level: number; rate: string | null; amount: string }[];
  held: boolean;
  /** Why the new commissions are voided at once: a refund that overtook its order, or fraud with fraud_action void. */
  voidReason: 'refund' | 'fraud' | null;
  /** Only clean, unrefunded conversions count toward tiers: a flagged one must not promote its affiliate. */
  countsRevenue: boolean;
  /** The tier lookup is made in the merchant's currency only, and for a positive amount. */
  tierLookup: boolean;
}

export const isPlan = (p: Plan | ProcessOutcome): p is Plan => !('kind' in p);

/** The advisory-lock keys of a conversion (see lockKeysAndReadSettings), qualified by its merchant. */
export function lockKeysOf(envelope: ConversionEnvelope): string[] {
  const d = envelope.data;
  const keys = [`order:${d.external_id}`];
  if (d.visit?.id) keys.push(`visit:${d.visit.id}`);
  if (d.visit?.ip_hash) keys.push(`ip:${d.visit.ip_hash}`);
  // Conversions of one affiliate touch the same rows (the affiliate, its stats): locking it up front, with the rest
  // in sorted order, keeps transactions that process several conversions from deadlocking on those rows.
  if (d.affiliate_id) keys.push(`aff:${d.affiliate_id}`);
  for (let i = 0; i < keys.length; i++) keys[i] = `${envelope.merchant_id}:${keys[i]}`;
  return keys;
}

/** What the claim records of a conversion. */
export function claimOf(envelope: ConversionEnvelope, at: Date): ConversionClaim {
  const d = envelope.data;
  return {
    merchantId: envelope.merchant_id,
    eventId: d.event_id,
    eventType: d.event_type,
    externalId: d.external_id,
    affiliateId: d.affiliate_id,
    amount: d.amount,
    currency: d.currency,
    visitId: d.visit?.id ?? null,
    ipHash: d.visit?.ip_hash ?? null,
    occurredAt: new Date(d.created_at),
    processedAt: at,
  };
}

/** What readConversionContexts needs of an attributed conversion: its claim and what the context compares with. */
export function contextLookupOf(
  claim: ConversionClaim,
  envelope: ConversionEnvelope,
  settings: MerchantSettings,
): ContextLookup {
  const d = envelope.data;
  return {
    ...claim,
    affiliateId: d.affiliate_id!,
    customerEmail: d.customer_email,
    fingerprint: d.visit?.fingerprint ?? null,
    maxLevels: Math.min(MAX_LEVELS, settings.level_rates.length),
  };
}

/**
 * The plan of an attributed conversion not processed before; the outcome itself when it was processed before or
 * earns nothing (it is still claimed then).
 */
export function planConversion(
  envelope: ConversionEnvelope,
  settings: MerchantSettings,
  context: ConversionContext,
  at: Date,
): Plan | ProcessOutcome {
  if (context.processedBefore) return { kind: 'duplicate' };
  const affiliate = context.affiliate;
  // Only approved affiliates earn (pending, suspended and rejected ones do not), and the others' conversions do not
  // count toward tiers.
  if (!affiliate || affiliate.status !== 'approved') return NOTHING;
  const d = envelope.data;
  const hits = fraudHits(affiliate, context, d.visit?.id ?? null, settings);
  const flagged = hits.length > 0;
  const refunded = context.refunded;
  const commissionLines = computeCommissionLines({
    eventType: d.event_type,
    amount: d.amount,
    currency: d.currency,
    settings,
    rates: { customRate: affiliate.custom_commission_rate, tierRate: affiliate.tier_rate },
  });
  // An ancestor that is not approved earns nothing, but the levels above it still count from the event's affiliate.
  const earners = new Map<number, string>([[0, affiliate.id]]);
  for (const a of context.ancestors) {
    if (a.status === 'approved') earners.set(a.level, a.id);
  }
  const lines: Plan['lines'] = [];
  for (const line of commissionLines) {
    const earner = earners.get(line.level);
    if (earner) {
      const amount = formatAmount(line.amount, d.currency);
      lines.push({ id: newId('com', at.getTime()), affiliateId: earner, level: line.level, rate: line.rate, amount });
    }
  }
  return {
    envelope,
    settings,
    affiliate,
    hits,
    flagged,
    refunded,
    lines,
    held: flagged && settings.fraud_action === 'hold',
    voidReason: refunded ? 'refund' : flagged && settings.fraud_action === 'void' ? 'fraud' : null,
    countsRevenue: !flagged && !refunded,
    tierLookup: d.currency === settings.currency && toDecimal(d.amount).gt(0),
  };
}

/** The fraud rules that this conversion trips (the counts were read with its claim). */
function fraudHits(
  affiliate: PlannedAffiliate,
  counts: { byVisit: number; byIp: number },
  visitId: string | null,
  settings: MerchantSettings,
): FraudHit[] {
  const hits: FraudHit[] = [];
  // The details say what matched, not the matching values: the webhook must not carry the e-mail or fingerprint.
  if (affiliate.email_matches) hits.push({ rule: 'self_referral', details: { matched: 'customer_email' } });
  if (affiliate.fingerprint_matches)
    hits.push({ rule: 'own_fingerprint', details: { matched: 'visit_fingerprint', visit_id: visitId } });
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
 * The tier an affiliate moves up to once its revenue (in the merchant's currency) has reached `reached`, or null.
 * Never down or sideways: a tier set by hand above the revenue stays.
 */
export function tierPromotion(
  affiliate: Pick<PlannedAffiliate, 'tier_id' | 'tier_threshold'>,
  reached: TierRow | undefined,
): TierRow | null {
  if (!reached || reached.id === affiliate.tier_id) return null;
  if (affiliate.tier_threshold !== null && toDecimal(affiliate.tier_threshold).gte(toDecimal(reached.threshold)))
    return null;
  return reached;
}
