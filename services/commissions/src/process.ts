import { findAffiliateView, presentAffiliate } from '@platform/shared/affiliate-view';
import type { Queryable, Sql } from '@platform/shared/db';
import type { OutboxEventType } from '@platform/shared/catalogue';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { settingsFromText, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import { inTransaction } from '@platform/shared/transactions';
import type { Clock } from './deps.ts';
import { clawbackEventData, commissionEventData } from './present.ts';
import { setAffiliateTier, type TierRow } from './queries/affiliates.ts';
import {
  insertCommissionsOfEvents,
  voidCommissions,
  voidOrderCommissions,
  type CommissionLine,
  type CommissionRow,
} from './queries/commissions.ts';
import {
  claimConversionsAndCountRevenue,
  lockKeysAndReadSettings,
  readConversionContexts,
  reverseOrderRevenue,
  type ContextLookup,
  type ConversionClaim,
  type CountedClaim,
  type CountedResult,
} from './queries/conversions.ts';
import { insertFraudFlag } from './queries/fraud-flags.ts';
import { clawBackPaidOrderCommissions, lockOrderPayouts, requestOrderVoids } from './queries/clawbacks.ts';
import { removeVoidedFromPendingPayouts } from './queries/payouts.ts';
import { addAttributedRevenue } from './queries/stats.ts';
import type { ConversionEnvelope } from './domain/envelope.ts';
import { toDecimal } from './domain/money.ts';
import {
  claimOf,
  contextLookupOf,
  isPlan,
  lockKeysOf,
  NOTHING,
  planConversion,
  tierPromotion,
  type PlannedAffiliate,
  type Plan,
  type ProcessOutcome,
} from './domain/plan.ts';

export type { ProcessOutcome } from './domain/plan.ts';

/**
 * The commission engine's batches: reads what domain/plan.ts decides from, in as few statements as a batch allows,
 * and writes what it decided. Everything one `conversion.recorded` causes: commissions (direct and up to five
 * ancestors), their outbox events, fraud flags, attributed revenue and tier promotion; or, for a refund, the voiding
 * of the order's commissions.
 */

/** The outbox events of a transaction, written with one statement before it commits, in the order they happened. */
type Outbox = { merchantId: string; type: OutboxEventType; data: Record<string, unknown> }[];

/** One conversion of a batch, from its lock keys to its outcome. */
interface Conversion {
  envelope: ConversionEnvelope;
  lockKeys: string[];
  /** Undefined: the merchant does not exist. */
  settings: MerchantSettings | undefined;
  outcome: ProcessOutcome | undefined;
}

/** A conversion processed with others (processTogether): its claim, what was read, what was decided and counted. */
interface Claimed {
  envelope: ConversionEnvelope;
  settings: MerchantSettings;
  claim: ConversionClaim;
  plan: Plan | ProcessOutcome;
  /** The claim as written, with the revenue it counts; null when the conversion was processed before. */
  counted: CountedClaim | null;
  result: CountedResult | undefined;
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
  const conversions = new Array<Conversion>(envelopes.length);
  const merchantIds = new Set<string>();
  const allKeys: string[] = [];
  for (let i = 0; i < envelopes.length; i++) {
    const envelope = envelopes[i]!;
    const lockKeys = lockKeysOf(envelope);
    conversions[i] = { envelope, lockKeys, settings: undefined, outcome: undefined };
    merchantIds.add(envelope.merchant_id);
    for (const key of lockKeys) allKeys.push(key);
  }
  const [, settingsText] = await Promise.all([begun, lockKeysAndReadSettings(tx, allKeys, [...merchantIds])]);

  const together: Conversion[] = [];
  const seen = new Set<string>();
  for (const conversion of conversions) {
    const merchantId = conversion.envelope.merchant_id;
    const text = settingsText.get(merchantId);
    conversion.settings = text === undefined ? undefined : settingsFromText(merchantId, text);
    let independent = conversion.settings !== undefined && conversion.envelope.data.event_type !== 'refund';
    for (const key of conversion.lockKeys) {
      if (seen.has(key)) independent = false;
      seen.add(key);
    }
    if (independent) together.push(conversion);
  }
  if (together.length > 0) await processTogether(tx, together, at, ctx.publicBaseUrl, outbox);
  for (const conversion of conversions) {
    if (conversion.outcome) continue;
    conversion.outcome = conversion.settings
      ? await processOne(tx, conversion, at, ctx.publicBaseUrl, outbox)
      : { kind: 'unknown_merchant' };
  }
  const results = new Array<ProcessOutcome>(conversions.length);
  for (let i = 0; i < conversions.length; i++) results[i] = conversions[i]!.outcome!;
  return { result: results, last: enqueueEvents(tx, outbox) };
}

/**
 * Independent non-refund conversions (see processConversions), with one statement for each step for all of them:
 * the contexts of the attributed ones; then, sent together, their commissions and every conversion's claim with the
 * revenue it counts. An unattributed conversion earns nothing and reads no context: its claim is all it writes.
 * Sets each conversion's outcome.
 */
async function processTogether(
  tx: Queryable,
  conversions: Conversion[],
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<void> {
  const items = new Array<Claimed>(conversions.length);
  const lookups: ContextLookup[] = [];
  for (let k = 0; k < conversions.length; k++) {
    const { envelope, settings } = conversions[k]!;
    const claim = claimOf(envelope, at);
    items[k] = { envelope, settings: settings!, claim, plan: NOTHING, counted: null, result: undefined };
    if (claim.affiliateId) lookups.push(contextLookupOf(claim, envelope, settings!));
  }
  const contexts = await readConversionContexts(tx, lookups);

  const lines: CommissionLine[] = [];
  const claims: CountedClaim[] = [];
  const claimedItems: Claimed[] = [];
  let next = 0;
  for (const item of items) {
    const context = item.claim.affiliateId ? contexts[next++]! : null;
    if (context) item.plan = planConversion(item.envelope, item.settings, context, at);
    if (context?.processedBefore) continue;
    // Claimed whatever the plan, so that a redelivery finds it processed; only a clean conversion counts revenue.
    const d = item.envelope.data;
    const counting = isPlan(item.plan) && item.plan.countsRevenue ? item.plan : null;
    item.counted = {
      ...item.claim,
      revenueCounted: counting ? d.amount : null,
      tierLookup: counting?.tierLookup ?? false,
    };
    claims.push(item.counted);
    claimedItems.push(item);
    if (!isPlan(item.plan)) continue;
    for (const line of item.plan.lines) {
      lines.push({
        ...line,
        merchantId: item.envelope.merchant_id,
        eventId: d.event_id,
        orderId: d.external_id,
        currency: d.currency,
        held: item.plan.held,
      });
    }
  }
  // Sent together: neither depends on the other, and the connection runs them in order.
  const [createdRows, counted] = await Promise.all([
    insertCommissionsOfEvents(tx, at, lines),
    claimConversionsAndCountRevenue(tx, at, claims),
  ]);
  for (let j = 0; j < claimedItems.length; j++) {
    const item = claimedItems[j]!;
    item.result = counted[j]!;
    if (item.result.claimed) continue;
    // An unattributed conversion (no context read) is found processed before by its claim alone: a redelivery.
    if (!item.claim.affiliateId) {
      item.plan = { kind: 'duplicate' };
      continue;
    }
    // The advisory locks let no other transaction claim these events since the contexts were read. Should one have
    // all the same, the whole batch rolls back and its messages are processed again one by one.
    throw new Error(`conversion ${item.claim.eventId} was claimed by another transaction`);
  }
  const createdByEvent = new Map<string, CommissionRow[]>();
  for (const row of createdRows) {
    const rows = createdByEvent.get(row.event_id);
    if (rows) rows.push(row);
    else createdByEvent.set(row.event_id, [row]);
  }
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    if (!isPlan(item.plan)) {
      conversions[k]!.outcome = item.plan;
      continue;
    }
    const created = (createdByEvent.get(item.claim.eventId) ?? []).sort(byLevel);
    const reached = item.counted?.revenueCounted !== null ? item.result?.reached : undefined;
    conversions[k]!.outcome = await completeConversion(tx, item.plan, created, reached, at, publicBaseUrl, outbox);
  }
}

const byLevel = (x: CommissionRow, y: CommissionRow) => x.level - y.level;

/** A conversion that depends on one before it in the batch, or a refund, alone. */
async function processOne(
  tx: Queryable,
  conversion: Conversion,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<ProcessOutcome> {
  const { envelope } = conversion;
  if (envelope.data.event_type !== 'refund') {
    await processTogether(tx, [conversion], at, publicBaseUrl, outbox);
    return conversion.outcome!;
  }
  // A refund counts no revenue: it takes back what its order counted.
  const [claim] = await claimConversionsAndCountRevenue(tx, at, [
    { ...claimOf(envelope, at), revenueCounted: null, tierLookup: false },
  ]);
  return claim!.claimed
    ? refundOrder(tx, envelope.merchant_id, envelope.data.external_id, at, outbox)
    : { kind: 'duplicate' };
}

/**
 * The rest of a planned conversion once its commissions are inserted (`created`, by level) and, when it counted
 * revenue, the tier that revenue reached: the voids, fraud flags and tier promotion it causes, and its outbox events
 * in the order they happened.
 */
async function completeConversion(
  tx: Queryable,
  plan: Plan,
  created: CommissionRow[],
  reached: TierRow | undefined,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<ProcessOutcome> {
  const merchantId = plan.envelope.merchant_id;
  const eventId = plan.envelope.data.event_id;
  const { affiliate } = plan;
  for (const row of created) outbox.push({ merchantId, type: 'commission.created', data: commissionEventData(row) });

  const voided = plan.voidReason ? await voidCommissions(tx, merchantId, created.map(idOf), plan.voidReason, at) : [];
  for (const row of voided) outbox.push({ merchantId, type: 'commission.voided', data: commissionEventData(row) });

  let flags = 0;
  for (const hit of plan.hits) {
    if (
      !(await insertFraudFlag(tx, {
        merchantId,
        affiliateId: affiliate.id,
        eventId,
        rule: hit.rule,
        details: hit.details,
        at,
      }))
    )
      continue;
    flags++;
    outbox.push({
      merchantId,
      type: 'fraud.flagged',
      data: { affiliate_id: affiliate.id, event_id: eventId, rule: hit.rule, details: hit.details },
    });
  }

  const tier = plan.tierLookup ? tierPromotion(affiliate, reached) : null;
  if (tier) await promote(tx, merchantId, affiliate, tier, at, publicBaseUrl, outbox);
  return { kind: 'processed', created: created.length, voided: voided.length, flags, promoted: tier !== null };
}

const idOf = (row: CommissionRow) => row.id;

/** Moves the affiliate to the tier its revenue reached (tierPromotion decided it), with affiliate.tier_promoted. */
async function promote(
  tx: Queryable,
  merchantId: string,
  affiliate: PlannedAffiliate,
  tier: TierRow,
  at: Date,
  publicBaseUrl: string,
  outbox: Outbox,
): Promise<void> {
  await setAffiliateTier(tx, merchantId, affiliate.id, tier.id, at);
  const view = await findAffiliateView(tx, merchantId, affiliate.id);
  outbox.push({
    merchantId,
    type: 'affiliate.tier_promoted',
    data: { ...presentAffiliate(view!, publicBaseUrl), previous_tier_id: affiliate.tier_id },
  });
}

/**
 * A refund voids every pending or approved commission of the order and takes the voided ones out of pending payouts;
 * one in a frozen payout (sending, sent, or exported) gets a recorded void, settled when that payout fails or is paid;
 * a paid one is voided and clawed back from the affiliate's next payouts (docs/PAYOUTS.md). It also takes the
 * order's revenue back out of the affiliates' totals. Tiers are not lowered. The refund's claim makes a redelivery
 * change nothing, so nothing is voided or clawed back twice.
 */
async function refundOrder(
  tx: Queryable,
  merchantId: string,
  orderId: string,
  at: Date,
  outbox: Outbox,
): Promise<ProcessOutcome> {
  await lockOrderPayouts(tx, merchantId, orderId);
  const voided = await voidOrderCommissions(tx, merchantId, orderId, 'refund', at);
  for (const row of voided) outbox.push({ merchantId, type: 'commission.voided', data: commissionEventData(row) });
  await removeVoidedFromPendingPayouts(tx, merchantId, voided.map(idOf), at);
  // Recorded, not dropped: commission.voided follows when the payout fails, or with its clawback when it is paid.
  await requestOrderVoids(tx, merchantId, orderId, 'refund', at);
  const clawed = await clawBackPaidOrderCommissions(tx, merchantId, orderId, 'refund', at);
  for (const row of clawed) outbox.push({ merchantId, type: 'commission.voided', data: clawbackEventData(row) });
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
  return { kind: 'processed', created: 0, voided: voided.length + clawed.length, flags: 0, promoted: false };
}
