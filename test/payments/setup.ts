import Stripe from 'stripe';
import { loadPaymentsConfig } from '@platform/payments/config';
import { startPaymentsService } from '@platform/payments/service';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createPlatformKey } from '../../scripts/admin/platform-keys.ts';
import { captureLogger, startPlatform, type TestLike } from '../helpers/platform.ts';

/**
 * The gateway and the payments service on the file's own database and NATS prefix, a test and a live platform key,
 * and the official Stripe SDK pointed at the gateway. `paymentsEnv` sets the payments service's clock (the
 * availability delay, the payout rail's step, the account link's lifetime).
 */
export async function startPayments(t: TestLike, opts: { paymentsEnv?: Record<string, string> } = {}) {
  const platform = await startPlatform(t);
  const payLog = captureLogger('payments');
  const payments = await startPaymentsService(
    loadPaymentsConfig({ ...platform.env, PUBLIC_BASE_URL: platform.baseUrl, ...opts.paymentsEnv }),
    payLog.log,
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
