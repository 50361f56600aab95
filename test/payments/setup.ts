import Stripe from 'stripe';
import { loadPaymentsConfig } from '@platform/payments/config';
import { processingFee } from '@platform/payments/domain/ledger-rules';
import type { PaymentProcessor } from '@platform/payments/processor';
import { startPaymentsService } from '@platform/payments/service';
import type { Sql } from '@platform/shared/db';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createPlatformKey } from '../../scripts/admin/platform-keys.ts';
import { captureLogger, startPlatform, type Platform, type TestLike } from '../helpers/platform.ts';
import { LIVE_CARD, withLiveCard } from './live-processor.ts';

/**
 * The gateway and the payments service on the file's own database and NATS prefix, a test and a live platform key,
 * and the official Stripe SDK pointed at the gateway. `paymentsEnv` sets the payments service's clock (the
 * availability delay, the payout rail's step, the account link's lifetime).
 */
export async function startPayments(t: TestLike, opts: PaymentsOptions = {}) {
  return attachPayments(t, await startPlatform(t), opts);
}

interface PaymentsOptions {
  paymentsEnv?: Record<string, string>;
  /** The processor the service is given (default: the sandbox with the live card of live-processor.ts). */
  processor?: (sql: Sql) => PaymentProcessor;
}

/** The payments service, keys and SDK clients on a platform started elsewhere (with the commissions service, say). */
export async function attachPayments(t: TestLike, platform: Platform, opts: PaymentsOptions = {}) {
  const payLog = captureLogger('payments');
  const payments = await startPaymentsService(
    loadPaymentsConfig({ ...platform.env, PUBLIC_BASE_URL: platform.baseUrl, ...opts.paymentsEnv }),
    payLog.log,
    // The sandbox, plus one live card standing in for a real processor, so that live accounts can be funded.
    opts.processor ?? withLiveCard,
  );
  t.teardown(() => payments.close());
  const port = platform.gateways[0]!.port;
  const stripe = (key: string, config: Stripe.StripeConfig = {}) =>
    new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, ...config });
  const testKey = await createPlatformKey(platform.sql, 'test');
  const liveKey = await createPlatformKey(platform.sql, 'live');
  return {
    platform,
    payments,
    logs: payLog.lines,
    stripe,
    testKey,
    liveKey,
    test: stripe(testKey.key),
    live: stripe(liveKey.key),
    merchant: async (name = 'Acme') => (await createMerchant(platform.sql, name, 'growth'))!['id'] as string,
  };
}

export type PaymentsStack = Awaited<ReturnType<typeof startPayments>>;

/** Every object of the platform's /v1 says its mode; Stripe's Account type leaves the field out. */
export const livemode = (object: object) => (object as { livemode?: boolean }).livemode;

/** What the hosted onboarding form takes; the account number decides the sandbox rail's verdict on payouts. */
export const ONBOARDING_FORM = {
  business_name: 'Acme Supplies',
  business_url: 'https://acme.example',
  product_description: 'Garden tools',
  account_holder_name: 'Jane Doe',
  routing_number: '110000000',
  account_number: '000123456789',
  tos: 'accepted',
};

/** Completes an account's onboarding over HTTP, as a browser without script would: open the link, post the form. */
export async function onboard(
  stack: PaymentsStack,
  accountId: string,
  form: Partial<typeof ONBOARDING_FORM> = {},
  client = stack.test,
) {
  const link = await client.accountLinks.create({
    account: accountId,
    type: 'account_onboarding',
    refresh_url: 'https://platform.example/refresh',
    return_url: 'https://platform.example/return',
  });
  const opened = await fetch(link.url, { redirect: 'manual' });
  if (opened.status !== 200) throw new Error(`opening the link answered ${opened.status}`);
  await opened.arrayBuffer();
  const submitted = await fetch(link.url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...ONBOARDING_FORM, ...form }).toString(),
  });
  if (submitted.status !== 303) throw new Error(`submitting answered ${submitted.status}: ${await submitted.text()}`);
  return submitted.headers.get('location');
}

/**
 * A connected account, onboarded, with `amount` cents available at once (the fee added on). Bound to a merchant
 * (metadata[merchant_id]) or asked `live`, it is a live account funded with the live stand-in's card (only a live key
 * binds, and only live money pays affiliate payouts); else a test one funded with pm_card_bypassPending.
 */
export async function fundedAccount(
  stack: PaymentsStack,
  available: number,
  form: Partial<typeof ONBOARDING_FORM> = {},
  metadata: Record<string, string> = {},
  mode: { live?: boolean } = { live: 'merchant_id' in metadata },
) {
  const client = mode.live ? stack.live : stack.test;
  const account = await client.accounts.create({ type: 'express', email: 'funded@example.com', metadata });
  await onboard(stack, account.id, form, client);
  // Gross so that the net is exactly `available`: the fee on gross g is round(0.029 g) + 30.
  let gross = available;
  while (gross - processingFee(gross, 'usd') < available) gross++;
  if (gross - processingFee(gross, 'usd') !== available) throw new Error(`no gross nets ${available}`);
  await client.paymentIntents.create({
    amount: gross,
    currency: 'usd',
    payment_method: mode.live ? LIVE_CARD : 'pm_card_bypassPending',
    confirm: true,
    transfer_data: { destination: account.id },
  });
  return account;
}
