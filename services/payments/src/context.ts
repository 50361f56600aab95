import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { invalidRequest } from '@platform/shared/payments/errors';
import type { PaymentsRpcRequest } from '@platform/shared/payments/rpc';
import type { PaymentsDeps } from './deps.ts';
import { accountExists } from './queries/accounts.ts';

/** Who acts: the key's mode, and the connected account named by Stripe-Account (null: the platform itself). */
export interface PaymentsContext {
  sql: Sql;
  livemode: boolean;
  account: string | null;
  /** The ledger's name for the balance this request acts on: the account, or 'platform'. */
  holder: string;
  keyId: string;
  requestId: string;
  /** The object the path names (`/v1/payouts/{id}`); '' for a path that names none. */
  id: string;
  /** The merchant a dashboard session acts for (PaymentsRpcRequest.for_merchant); null for a key's request. */
  forMerchant: string | null;
  log: Logger;
  deps: PaymentsDeps;
}

/**
 * The context of a /v1 request: the account named by Stripe-Account must exist in the key's mode (403
 * account_invalid otherwise, as Stripe answers a key without access to it).
 */
export async function paymentsContext(
  deps: PaymentsDeps,
  request: PaymentsRpcRequest,
  log: Logger,
): Promise<PaymentsContext> {
  const account = request.account;
  if (account !== null && !(await accountExists(deps.sql, request.livemode, account)))
    throw invalidRequest(
      `The provided key does not have access to account '${account}' (or that account does not exist).`,
      { code: 'account_invalid', status: 403 },
    );
  return {
    sql: deps.sql,
    livemode: request.livemode,
    account,
    holder: account ?? 'platform',
    keyId: request.key_id,
    requestId: request.request_id,
    id: request.path?.['id'] ?? '',
    forMerchant: request.for_merchant ?? null,
    log,
    deps,
  };
}
