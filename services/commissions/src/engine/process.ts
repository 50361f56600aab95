import { findAffiliateView, presentAffiliate } from '@platform/shared/affiliate-view';
import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { OutboxEventType } from '@platform/shared/catalogue';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { settingsFromText, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import { inTransaction } from '@platform/shared/transactions';
import type { Clock } from '../deps.ts';
import { commissionEventData } from '../present.ts';
import { setAffiliateTier, type TierRow } from '../queries/affiliates.ts';
import {
  insertCommissionsOfEvents,
  voidCommissions,
  voidOrderCommissions,
  type CommissionLine,
  type CommissionRow,
} from '../queries/commissions.ts';
import {
  claimConversionsAndCountRevenue,
  lockKeysAndReadSettings,
  readConversionContexts,
  reverseOrderRevenue,
  type ContextLookup,
  type ConversionClaim,
  type ConversionContext,
  type CountedClaim,
} from '../queries/conversions.ts';
import { insertFraudFlag, type FraudRule } from '../queries/fraud-flags.ts';
import { addAttributedRevenue } from '../queries/stats.ts';
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
  for (let i = 0; i < keys.length; i++) keys[i] = `${envelope.merchant_id}:${keys[i]}`;
  return keys;
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
 *
 * Attributed conversions that share no lock key (order, visit, IP hash, affiliate) with a conversion before them in
 * the batch cannot see each other's writes, so they are processed together, with one statement for all their
 * claims and contexts and one each for all their commissions and all their revenue, instead of three statements
 * per conversion; processing them first is one of the orders they could have been processed in alone. The others
 * (refunds, unattributed events, a second conversion of a visit or an affiliate) follow one by one, in order.
 */
export async function processConversions(
  sql: Sql,
  envelopes: ConversionEnvelope[],
  ctx: { now: Clock; publicBaseUrl: string },
): Promise<ProcessOutcome[]> {
  const outbox: Outbox = [];
  const outcomes = await inTransaction(sql, (tx, begun) => processInTransaction(tx, begun, envelopes, ctx, outbox));
  if (outbox.length > 0) outboxCommitted(sql);
  return outcomes;
}

/**
 * The transaction of processConversions. A function of the module, with loops rather than callbacks made per batch,
 * here and in what it calls: see @platform/shared/unnest for why.
 */
async function processInTransaction(
  tx: Queryable,
  begun: Promise<unknown>,
  envelopes: ConversionEnvelope[],
  ctx: { now: Clock; publicBaseUrl: string },
  outbox: Outbox,
): Promise<{ result: ProcessOutcome[]; last: Promise<unknown> }> {
  outbox.length = 0;
  const at = ctx.now();
  const merchantIds = new Set<string>();
  const lockKeys: string[][] = new Array(envelopes.length);
  for (let i = 0; i < envelopes.length; i++) {
    merchantIds.add(envelopes[i]!.merchant_id);
    lockKeys[i] = lockKeysOf(envelopes[i]!);
  }
  const [, settingsText] = await Promise.all([begun, lockKeysAndReadSettings(tx, lockKeys.flat(), [...merchantIds])]);
  const settings = new Array<MerchantSettings | undefined>(envelopes.length);
  for (let i = 0; i < envelopes.length; i++) {
    const text = settingsText.get(envelopes[i]!.merchant_id);
    settings[i] = text === undefined ? undefined : settingsFromText(envelopes[i]!.merchant_id, text);
  }

  const results: ProcessOutcome[] = new Array(envelopes.length);
  const together: { index: number; envelope: ConversionEnvelope; settings: MerchantSettings }[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < envelopes.length; index++) {
    const envelope = envelopes[index]!;
    const merchantSettings = settings[index];
    let independent = merchantSettings !== undefined && envelope.data.event_type !== 'refund';
    for (const k of lockKeys[index]!) {
      if (seen.has(k)) independent = false;
      seen.add(k);
    }
    if (independent) together.push({ index, envelope, settings: merchantSettings! });
  }
  if (together.length > 0) {
    const processed = await processTogether(tx, together, at, ctx.publicBaseUrl, outbox);
    for (let k = 0; k < together.length; k++) results[together[k]!.index] = processed[k]!;
  }
  for (let index = 0; index < envelopes.length; index++) {
    if (results[index]) continue;
    const merchantSettings = settings[index];
    results[index] = merchantSettings
      ? await processOne(tx, envelopes[index]!, merchantSettings, at, ctx.publicBaseUrl, outbox)
      : { kind: 'unknown_merchant' };
  }
  return { result: results, last: enqueueEvents(tx, outbox) };
}

/** What an attributed conversion that was claimed now will write, decided from its context. */
interface Plan {
  envelope: ConversionEnvelope;
  settings: MerchantSettings;
  affiliate: NonNullable<ConversionContext['affiliate']>;
  hits: FraudHit[];
  flagged: boolean;
  refunded: boolean;
  /** The commissions to insert (one per level that has an earner), held when a fraud rule fired and says hold. */
  lines: { id: string; affiliateId: string; level: number; rate: string | null; amount: string }[];
  held: boolean;
  /** Only clean, unrefunded conversions count toward tiers: a flagged one must not promote its affiliate. */
  countsRevenue: boolean;
  /** The tier lookup is made in the merchant's currency only, and for a positive amount. */
  tierLookup: boolean;
}

/** What the claim records of a conversion. */
function claimOf(envelope: ConversionEnvelope, at: Date): ConversionClaim {
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
function contextLookupOf(claim: ConversionClaim, envelope: ConversionEnvelope, settings: MerchantSettings): ContextLookup {
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
function planConversion(envelope: ConversionEnvelope, settings: MerchantSettings, context: ConversionContext, at: Date): Plan | ProcessOutcome {
  if (context.processedBefore) return { kind: 'duplicate' };
  const affiliate = context.affiliate;
  // Suspended affiliates earn nothing, and their conversions do not count toward tiers.
  if (!affiliate || affiliate.status === 'suspended') return nothing;
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
  // A suspended ancestor earns nothing, but the levels above it still count from the event's affiliate.
  const earners = new Map<number, string>([[0, affiliate.id]]);
  for (const a of context.ancestors) {
    if (a.status !== 'suspended') earners.set(a.level, a.id);
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
    countsRevenue: !flagged && !refunded,
    tierLookup: d.currency === settings.currency && toDecimal(d.amount).gt(0),
  };
}

const isPlan = (p: Plan | ProcessOutcome): p is Plan => !('kind' in p);

/**
 * Independent non-refund conversions (see processConversions), with one statement for each step for all of them:
 * the contexts of the attributed ones; then, sent together, their commissions and every conversion's claim with the
 * revenue it counts. An unattributed conversion earns nothing and reads no context: its claim is all it writes.
 */
async function processTogether(
  tx: Queryable,
  items: { envelope: ConversionEnvelope; settings: MerchantSettings }[],
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<ProcessOutcome[]> {
  const claimsOfItems = new Array<ConversionClaim>(items.length);
  const lookups: ContextLookup[] = [];
  for (let k = 0; k < items.length; k++) {
    const { envelope, settings } = items[k]!;
    const claim = claimOf(envelope, at);
    claimsOfItems[k] = claim;
    if (claim.affiliateId) lookups.push(contextLookupOf(claim, envelope, settings));
  }
  const contexts = await readConversionContexts(tx, lookups);
  const plans = new Array<Plan | ProcessOutcome>(items.length);
  const lines: CommissionLine[] = [];
  const claims: CountedClaim[] = [];
  /** The item of each claim. */
  const claimedItems: number[] = [];
  let next = 0;
  for (let k = 0; k < items.length; k++) {
    const envelope = items[k]!.envelope;
    const claim = claimsOfItems[k]!;
    const context = claim.affiliateId ? contexts[next++]! : null;
    const plan = context ? planConversion(envelope, items[k]!.settings, context, at) : nothing;
    plans[k] = plan;
    if (context?.processedBefore) continue;
    // Claimed whatever the plan, so that a redelivery finds it processed; only a clean conversion counts revenue.
    const d = envelope.data;
    const counting = isPlan(plan) && plan.countsRevenue ? plan : null;
    claims.push({ ...claim, revenueCounted: counting ? d.amount : null, tierLookup: counting?.tierLookup ?? false });
    claimedItems.push(k);
    if (!isPlan(plan)) continue;
    for (const line of plan.lines) {
      lines.push({ ...line, merchantId: envelope.merchant_id, eventId: d.event_id, orderId: d.external_id, currency: d.currency, held: plan.held });
    }
  }
  // Sent together: neither depends on the other, and the connection runs them in order.
  const [createdRows, counted] = await Promise.all([insertCommissionsOfEvents(tx, at, lines), claimConversionsAndCountRevenue(tx, at, claims)]);
  const countedByEvent = new Map<string, { reached: TierRow | undefined }>();
  for (let j = 0; j < claims.length; j++) {
    if (!counted[j]!.claimed) {
      // An unattributed conversion (no context read) is found processed before by its claim alone: a redelivery.
      if (!claims[j]!.affiliateId) {
        plans[claimedItems[j]!] = { kind: 'duplicate' };
        continue;
      }
      // The advisory locks let no other transaction claim these events since the contexts were read. Should one have
      // all the same, the whole batch rolls back and its messages are processed again one by one.
      throw new Error(`conversion ${claims[j]!.eventId} was claimed by another transaction`);
    }
    if (claims[j]!.revenueCounted !== null) countedByEvent.set(claims[j]!.eventId, counted[j]!);
  }
  const createdByEvent = new Map<string, CommissionRow[]>();
  for (const row of createdRows) {
    const rows = createdByEvent.get(row.event_id);
    if (rows) rows.push(row);
    else createdByEvent.set(row.event_id, [row]);
  }
  const outcomes: ProcessOutcome[] = [];
  for (const plan of plans) {
    if (!isPlan(plan)) {
      outcomes.push(plan);
      continue;
    }
    const eventId = plan.envelope.data.event_id;
    const created = (createdByEvent.get(eventId) ?? []).sort(byLevel);
    outcomes.push(await completeConversion(tx, plan, created, countedByEvent.get(eventId), at, publicBaseUrl, outbox));
  }
  return outcomes;
}

const byLevel = (x: CommissionRow, y: CommissionRow) => x.level - y.level;

/** A conversion that depends on one before it in the batch, or a refund, alone. */
async function processOne(
  tx: Queryable,
  envelope: ConversionEnvelope,
  settings: MerchantSettings,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<ProcessOutcome> {
  if (envelope.data.event_type !== 'refund') {
    const [outcome] = await processTogether(tx, [{ envelope, settings }], at, publicBaseUrl, outbox);
    return outcome!;
  }
  // A refund counts no revenue: it takes back what its order counted.
  const [claim] = await claimConversionsAndCountRevenue(tx, at, [{ ...claimOf(envelope, at), revenueCounted: null, tierLookup: false }]);
  return claim!.claimed ? refundOrder(tx, envelope.merchant_id, envelope.data.external_id, at, outbox) : { kind: 'duplicate' };
}

/**
 * The rest of a planned conversion once its commissions are inserted (`created`, by level) and, when it counts, its
 * revenue counted: the voids, fraud flags and tier promotion it causes, and its outbox events in the order they
 * happened.
 */
async function completeConversion(
  tx: Queryable,
  plan: Plan,
  created: CommissionRow[],
  counted: { reached: TierRow | undefined } | undefined,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<ProcessOutcome> {
  const merchantId = plan.envelope.merchant_id;
  const eventId = plan.envelope.data.event_id;
  const { affiliate, settings } = plan;
  for (const row of created) outbox.push({ merchantId, type: 'commission.created', data: commissionEventData(row) });

  // A refund that overtook its order voids the order's commissions as they are created.
  const voidReason = plan.refunded ? 'refund' : plan.flagged && settings.fraud_action === 'void' ? 'fraud' : null;
  const voided = voidReason ? await voidCommissions(tx, merchantId, created.map((c) => c.id), voidReason, at) : [];
  for (const row of voided) outbox.push({ merchantId, type: 'commission.voided', data: commissionEventData(row) });

  let flags = 0;
  for (const hit of plan.hits) {
    if (!(await insertFraudFlag(tx, { merchantId, affiliateId: affiliate.id, eventId, rule: hit.rule, details: hit.details, at }))) continue;
    flags++;
    outbox.push({ merchantId, type: 'fraud.flagged', data: { affiliate_id: affiliate.id, event_id: eventId, rule: hit.rule, details: hit.details } });
  }

  const promoted =
    counted !== undefined && plan.tierLookup
      ? await promoteIfThresholdCrossed(tx, merchantId, affiliate, counted.reached, at, publicBaseUrl, outbox)
      : false;
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
