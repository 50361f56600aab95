import { randomUUID } from 'node:crypto';
import { loadGatewayConfig } from '@platform/gateway/config';
import { renewalDeps } from '@platform/gateway/surfaces/dashboard/billing-renewals';
import { createRequester } from '@platform/gateway/http/requester';
import { connectNats } from '@platform/shared/nats';
import { createDashboardUser, sessionRequest, signInHttp } from './dashboard.ts';
import { captureLogger, type Platform, type TestLike } from './platform.ts';

/** The sandbox's test cards as Settings › Plan takes them. */
export const GOOD_CARD = { number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' };
export const DECLINED_CARD = { number: '4000 0000 0000 0002', expiry: '12/34', cvc: '123' };

/** A merchant on `plan` with a signed-in owner, and the calls of Settings › Plan for it. */
export async function billingOwner(platform: Platform, plan: 'free' | 'starter' | 'growth' = 'free') {
  const merchant = await platform.merchant({ plan });
  const email = `owner-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  const session = await signInHttp(platform.baseUrl, email);
  const call = (method: string, path: string, body?: unknown) =>
    sessionRequest(platform.baseUrl, session, method, path, body);
  return {
    id: merchant.id,
    session,
    call,
    billing: () => call('GET', '/dashboard/api/billing'),
    upgrade: (body: { plan: string; attempt?: string; card?: typeof GOOD_CARD }) =>
      call('POST', '/dashboard/api/billing/upgrade', { attempt: randomUUID(), ...body }),
    plan: async () =>
      (await platform.sql<{ plan: string }[]>`select plan from merchants where id = ${merchant.id}`)[0]!.plan,
    charges: () =>
      platform.sql<{ status: string; amount: string; payment_intent: string | null }[]>`
        select status, amount::text, payment_intent from billing_charges where merchant_id = ${merchant.id}`,
    /** The payment intents made on the platform's own account for this merchant's plan. */
    intents: () =>
      platform.sql<{ id: string; amount: string; status: string; livemode: boolean }[]>`
        select id, amount::text, status, livemode from payment_intents
        where metadata ->> 'merchant_id' = ${merchant.id}`,
  };
}

/** What the gateway's renewal job runs with, for a test to run its passes on a clock of its own (renewDue). */
export async function renewalTestDeps(t: TestLike, platform: Platform) {
  const nc = await connectNats(platform.env['NATS_URL']!, 'renewal-test');
  t.teardown(() => nc.close());
  return renewalDeps(platform.sql, createRequester(nc), loadGatewayConfig(platform.env), captureLogger('renewals').log);
}
