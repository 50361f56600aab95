import type { CommissionsService } from '@platform/commissions/service';
import {
  awaitProcessed,
  conversion,
  createAffiliate,
  recordConversions,
  setMerchantSettings,
  startCommissions,
  testClock,
} from './commissions.ts';
import { startPlatform, type Platform, type TestLike } from './platform.ts';
import { startReceiver } from './receiver.ts';

/**
 * Helpers for the payouts tests: the platform with the commissions service (on a settable clock), merchants whose
 * commissions are approved at once (hold_days 0) and earn a tenth of each conversion, and affiliates with approved
 * commissions of chosen amounts, reached through the real pipeline (conversion.recorded → commissions → hold pass).
 */

export async function startPayoutsPlatform(t: TestLike, opts: { env?: Record<string, string> } = {}) {
  const platform = await startPlatform(t);
  const clock = testClock();
  const { service, logs } = await startCommissions(t, platform, { now: clock.now, env: opts.env });
  return { platform, clock, service, logs };
}

export type PayoutMerchant = Awaited<ReturnType<Platform['merchant']>>;

/** A merchant paying 10 percent, approving at once, with these extra settings (`key=value`, as the CLI takes them). */
export async function payoutMerchant(platform: Platform, settings: string[] = []): Promise<PayoutMerchant> {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1', 'hold_days=0', ...settings]);
  return m;
}

/**
 * One conversion per entry (event amount and currency) for the affiliate; waits until their commissions exist and
 * are approved. Answers the commission ids in the order of the entries (each must earn a commission).
 */
export async function approvedCommissions(
  platform: Platform,
  service: CommissionsService,
  merchantId: string,
  affiliateId: string,
  events: { amount: string; currency?: string }[],
): Promise<string[]> {
  const conversions = events.map((e) =>
    conversion({ affiliate_id: affiliateId, amount: e.amount, currency: e.currency ?? 'USD' }),
  );
  await recordConversions(platform.sql, merchantId, conversions);
  await awaitProcessed(
    platform.sql,
    merchantId,
    conversions.map((c) => c.event_id),
  );
  await service.approveEndedHolds();
  const rows = await platform.sql<{ id: string; status: string; event_id: string }[]>`
    select id, status, event_id from commissions
    where merchant_id = ${merchantId} and event_id in ${platform.sql(conversions.map((c) => c.event_id))}`;
  if (rows.length !== events.length || rows.some((r) => r.status !== 'approved'))
    throw new Error('commissions not approved');
  const byEvent = new Map(rows.map((r) => [r.event_id, r.id]));
  return conversions.map((c) => byEvent.get(c.event_id)!);
}

export async function affiliate(m: PayoutMerchant, email: string) {
  return createAffiliate(m.client, { email });
}

/** A webhook receiver and the merchant's endpoint sending it the payout events; answers the receiver and the secret. */
export async function payoutWebhooks(t: TestLike, m: PayoutMerchant) {
  const receiver = await startReceiver(t);
  const endpoint = await m.client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['payout.sent', 'payout.paid', 'payout.failed'],
  });
  if (endpoint.status !== 201) throw new Error(`creating the endpoint answered ${endpoint.status}: ${endpoint.text}`);
  return { receiver, secret: endpoint.body.secret as string };
}

const orderOf = async (platform: Platform, commissionId: string) =>
  (await platform.sql<{ order_id: string }[]>`select order_id from commissions where id = ${commissionId}`)[0]!
    .order_id;

/** Refunds the orders of the commissions and waits until the refunds are processed. */
export async function refundOrders(platform: Platform, merchantId: string, commissionIds: string[]) {
  const refunds = await Promise.all(
    commissionIds.map(async (id) =>
      conversion({ affiliate_id: null, event_type: 'refund', amount: '0', external_id: await orderOf(platform, id) }),
    ),
  );
  await recordConversions(platform.sql, merchantId, refunds);
  await awaitProcessed(
    platform.sql,
    merchantId,
    refunds.map((r) => r.event_id),
  );
}

/** The commission.voided events the outbox holds for one commission. */
export const voidedEvents = async (platform: Platform, merchantId: string, commissionId: string) =>
  (
    await platform.sql<{ data: Record<string, unknown> }[]>`
      select data from outbox
      where merchant_id = ${merchantId} and type = 'commission.voided' and data->>'commission_id' = ${commissionId}`
  ).map((r) => r.data);
