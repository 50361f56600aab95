import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { invalidRequest } from '@platform/shared/payments/errors';
import type { PaymentsOperation } from '@platform/shared/payments/operations';
import type { PaymentsRpcRequest } from '@platform/shared/payments/rpc';
import type { Static, TObject } from '@sinclair/typebox';
import type { PaymentsDeps } from './deps.ts';
import { accountExists } from './queries/accounts.ts';
import type { Handler } from './rpc.ts';
import { compileParams } from './validate.ts';

/** Who acts: the key's mode, and the connected account named by Stripe-Account (null: the platform itself). */
export interface PaymentsContext {
  sql: Sql;
  livemode: boolean;
  account: string | null;
  /** The ledger's name for the balance this request acts on: the account, or 'platform'. */
  holder: string;
  keyId: string;
  requestId: string;
  log: Logger;
  deps: PaymentsDeps;
}

/** Binds a handler to its /v1 operation; parameters are validated (and coerced from text) before it runs. */
export function definePaymentsOperation<P extends TObject>(
  deps: PaymentsDeps,
  spec: PaymentsOperation<P>,
  handler: (ctx: PaymentsContext, params: Static<P>, id: string) => Promise<unknown>,
): Handler<PaymentsRpcRequest> {
  const validate = compileParams<Static<P>>(spec.params);
  return {
    name: spec.name,
    async run(request, log) {
      const params = validate(request.params ?? {});
      const account = request.account;
      if (account !== null && !(await accountExists(deps.sql, request.livemode, account)))
        throw invalidRequest(
          `The provided key does not have access to account '${account}' (or that account does not exist).`,
          { code: 'account_invalid', status: 403 },
        );
      const ctx: PaymentsContext = {
        sql: deps.sql,
        livemode: request.livemode,
        account,
        holder: account ?? 'platform',
        keyId: request.key_id,
        requestId: request.request_id,
        log,
        deps,
      };
      return handler(ctx, params, request.path?.['id'] ?? '');
    },
  };
}
