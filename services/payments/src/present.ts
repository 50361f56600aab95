import type { AccountRow } from './queries/accounts.ts';
import type { PaymentIntentRow } from './queries/payment-intents.ts';
import type { BalanceTransactionRow } from './queries/transactions.ts';
import type { PayoutRow } from './queries/payouts.ts';
import { accountStanding } from './domain/requirements.ts';
import { objectIdPage, type RowPosition } from '@platform/shared/cursor';
import type { ListParams } from './queries/keyset.ts';
import { stripeListRefusals } from './stripe-errors.ts';

/**
 * The only way the payments service's rows leave it, field by field, so that a column added to a table is never
 * exposed by accident (the encrypted bank account never is; only its last four digits and routing number are).
 */
export function presentAccount(a: AccountRow) {
  const standing = accountStanding(a);
  const bank = a.bank_last4
    ? [
        {
          id: `ba_${a.id}`,
          object: 'bank_account' as const,
          account: a.id,
          account_holder_name: a.bank_holder_name,
          bank_name: null,
          country: a.country,
          currency: a.default_currency,
          last4: a.bank_last4,
          routing_number: a.bank_routing_number ?? '',
          status: 'new' as const,
        },
      ]
    : [];
  return {
    id: a.id,
    object: 'account' as const,
    type: a.type,
    country: a.country,
    email: a.email,
    business_type: a.business_type,
    business_profile: { name: a.business_name, url: a.business_url, product_description: a.product_description },
    default_currency: a.default_currency,
    charges_enabled: standing.charges_enabled,
    payouts_enabled: standing.payouts_enabled,
    details_submitted: standing.details_submitted,
    requirements: {
      currently_due: standing.currently_due,
      eventually_due: standing.currently_due,
      past_due: standing.currently_due,
      disabled_reason: standing.disabled_reason,
      current_deadline: null,
      errors: [],
    },
    external_accounts: {
      object: 'list' as const,
      data: bank,
      has_more: false,
      url: `/v1/accounts/${a.id}/external_accounts`,
    },
    metadata: a.metadata,
    created: unixSeconds(a.created_at),
    livemode: a.livemode,
  };
}

export function presentPaymentIntent(p: PaymentIntentRow) {
  return {
    id: p.id,
    object: 'payment_intent' as const,
    amount: Number(p.amount),
    amount_capturable: p.status === 'requires_capture' ? Number(p.amount) : 0,
    amount_received: Number(p.amount_received),
    currency: p.currency,
    status: p.status,
    capture_method: p.capture_method,
    confirmation_method: 'automatic' as const,
    payment_method: p.payment_method,
    payment_method_types: ['card'],
    client_secret: p.client_secret,
    description: p.description,
    metadata: p.metadata,
    transfer_data: p.transfer_destination ? { destination: p.transfer_destination } : null,
    on_behalf_of: null,
    last_payment_error: p.last_payment_error,
    next_action:
      p.status === 'requires_action'
        ? { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect' } }
        : null,
    latest_charge: null,
    cancellation_reason: p.cancellation_reason,
    canceled_at: p.canceled_at ? unixSeconds(p.canceled_at) : null,
    created: unixSeconds(p.created_at),
    livemode: p.livemode,
  };
}

export function presentBalanceTransaction(t: BalanceTransactionRow) {
  return {
    id: t.id,
    object: 'balance_transaction' as const,
    amount: Number(t.amount),
    fee: Number(t.fee),
    net: Number(t.net),
    currency: t.currency,
    type: t.type,
    status: t.status,
    available_on: unixSeconds(t.available_on),
    source: t.source,
    description: t.description,
    reporting_category: REPORTING_CATEGORY[t.type],
    created: unixSeconds(t.created_at),
  };
}

const REPORTING_CATEGORY: Record<BalanceTransactionRow['type'], string> = {
  charge: 'charge',
  payment: 'charge',
  payout: 'payout',
  payout_failure: 'payout_reversal',
  transfer: 'transfer',
};

export function presentPayout(p: PayoutRow) {
  return {
    id: p.id,
    object: 'payout' as const,
    amount: Number(p.amount),
    currency: p.currency,
    status: p.status,
    arrival_date: unixSeconds(p.arrival_date),
    balance_transaction: p.balance_transaction,
    failure_balance_transaction: p.failure_balance_transaction,
    failure_code: p.failure_code,
    failure_message: p.failure_message,
    destination: p.holder === 'platform' ? null : `ba_${p.holder}`,
    method: 'standard' as const,
    type: 'bank_account' as const,
    automatic: false as const,
    description: p.description,
    metadata: p.metadata,
    created: unixSeconds(p.created_at),
    livemode: p.livemode,
  };
}

export const unixSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * Stripe's list envelope over a page of rows newest first (objectIdPage in cursor.ts): `starting_after` pages towards
 * older objects and `ending_before` towards newer ones; the object a cursor names must be one this caller may see
 * (`locate` answers its created time), else 400 resource_missing.
 */
export async function presentList<R extends { created_at: Date; id: string }, T>(opts: {
  params: ListParams;
  url: string;
  locate: (id: string) => Promise<Date | null>;
  fetch: (position: RowPosition, limit: number) => Promise<R[]>;
  present: (row: R) => T;
}): Promise<{ object: 'list'; data: T[]; has_more: boolean; url: string }> {
  const { data, has_more } = await objectIdPage({
    after: opts.params.starting_after,
    before: opts.params.ending_before,
    limit: opts.params.limit ?? 10,
    locate: opts.locate,
    fetch: opts.fetch,
    present: opts.present,
    refuse: stripeListRefusals,
  });
  return { object: 'list', data, has_more, url: opts.url };
}
