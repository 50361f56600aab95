import type { IdempotencyClaim } from '../idempotent-reply.ts';

/**
 * What the gateway sends the payments service ({prefix}.rpc.payments.{operation}, queue group "payments"). The mode
 * and the key come from the authenticated platform key; `account` from the Stripe-Account header. The reply carries the
 * RPC `Outcome` header (catalogue.ts): `ok` with the object, or `error` with a PaymentsRpcError (payments/errors.ts).
 */
export interface PaymentsRpcRequest {
  request_id: string;
  /** Epoch milliseconds after which the gateway has given up. */
  deadline: number;
  key_id: string;
  livemode: boolean;
  /** acct_… from Stripe-Account: act for that connected account; null for the platform itself. */
  account: string | null;
  /** Path parameters (`id`). */
  path: Record<string, string>;
  /** The query string's or the form body's parameters, decoded from bracket notation. */
  params: Record<string, unknown>;
  /** The Idempotency-Key's claim this request holds, when it carries one: the service keeps its reply on it. */
  idempotency?: IdempotencyClaim;
  /**
   * mer_…: the merchant a dashboard session acts for, set by the gateway only (NATS permissions let no one else ask
   * the payments service). create_account then opens that merchant's own connected account.
   */
  for_merchant?: string;
}

/**
 * The hosted onboarding page of an account link, which carries no key: the gateway serves
 * /connect/onboarding/{token} and asks the payments service `onboarding_open` (GET) and `onboarding_submit` (POST).
 */
export interface OnboardingRequest {
  request_id: string;
  deadline: number;
  token: string;
  /** The submitted form (onboarding_submit only). */
  form?: Record<string, string>;
}

/** Where the browser goes, or the page to show (with the problems of a submitted form). */
export type OnboardingReply =
  | { kind: 'redirect'; url: string }
  | { kind: 'not_found' }
  | {
      kind: 'page';
      account: { id: string; email: string | null; business_name: string | null; country: string };
      /** Origins the page's form may lead to (its own, then return_url's and refresh_url's). */
      redirect_origins: string[];
      values: Record<string, string>;
      problems: Record<string, string>;
    };

/**
 * Affiliate payouts with method `platform` (the commissions service ↔ the payments service, request/reply):
 * - `{prefix}.rpc.payments.affiliate_payout`: the commissions service asks for a ledger transfer from the merchant's
 *   connected account to the affiliate and a payout to the affiliate's bank; idempotent by `payout_id` (the same
 *   request again answers the first ledger payout, or 409 `amount_mismatch` when that one moved another amount).
 *   Reply: `ok` with AffiliatePayoutReply, or `error` with a PaymentsRpcError (`no_connected_account`,
 *   `balance_insufficient`, `amount_mismatch`).
 * - `{prefix}.rpc.commissions.platform_payout_settled`: the payments service reports the ledger payout's outcome; its
 *   clock sends it again until the commissions service answers `ok` (which it does for a payout already so moved).
 */
export interface AffiliatePayoutRequest {
  request_id: string;
  deadline: number;
  merchant_id: string;
  /** The affiliate payout (po_… of the commissions service). */
  payout_id: string;
  affiliate_id: string;
  /** Exact decimal text in `currency` ("182.50"). */
  amount: string;
  /** ISO 4217, upper case. */
  currency: string;
  /** The last four characters of the affiliate's account: all the sandbox rail needs, and all it keeps. */
  destination_last4: string;
}

export interface AffiliatePayoutReply {
  /** The ledger payout (po_… of the payments service). */
  ledger_payout_id: string;
  status: 'pending' | 'in_transit' | 'paid' | 'failed';
  /** What it moved: exact decimal text ("182.50"), and ISO 4217 upper case, as the request names them. */
  amount: string;
  currency: string;
}

export interface PayoutSettledRequest {
  request_id: string;
  deadline: number;
  merchant_id: string;
  payout_id: string;
  ledger_payout_id: string;
  status: 'paid' | 'failed';
  failure_reason: string | null;
}
