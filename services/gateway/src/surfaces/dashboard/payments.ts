import { RPC_OUTCOME_HEADER, rpcSubject } from '@platform/shared/catalogue';
import { ApiError } from '@platform/shared/errors';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { PaymentsRpcError } from '@platform/shared/payments/errors';
import type { PaymentsRpcRequest } from '@platform/shared/payments/rpc';
import type { Requester } from '../../http/requester.ts';

/** One payment API operation asked for a dashboard user: its mode, the account acted for, its parameters. */
export interface PaymentsCall {
  livemode: boolean;
  /** Stripe-Account: the connected account acted for, or null for the platform. */
  account: string | null;
  path?: Record<string, string>;
  params: Record<string, unknown>;
}

export type PaymentsCaller = <T>(
  operation: string,
  call: PaymentsCall,
  who: { requestId: string; userId: string; forMerchant?: string },
) => Promise<T>;

/**
 * The payments service asked over NATS as /v1 asks it, for the dashboard's Balance page. Its refusals become the
 * dashboard's error envelope: a missing object NOT_FOUND, a card declined or a parameter refused INVALID_INPUT with
 * the service's own words, no answer UNAVAILABLE.
 */
export function createPaymentsCaller(requester: Requester, prefix: string, timeoutMs: number): PaymentsCaller {
  return async <T>(
    operation: string,
    call: PaymentsCall,
    who: { requestId: string; userId: string; forMerchant?: string },
  ) => {
    const request: PaymentsRpcRequest = {
      request_id: who.requestId,
      deadline: Date.now() + timeoutMs,
      // The payment API records which key acted; here a dashboard user did.
      key_id: who.userId,
      livemode: call.livemode,
      account: call.account,
      path: call.path ?? {},
      params: call.params,
      ...(who.forMerchant ? { for_merchant: who.forMerchant } : {}),
    };
    const answer = await requester.request(rpcSubject(prefix, 'payments', operation), encodeJson(request), timeoutMs);
    if (answer.kind !== 'reply')
      throw new ApiError('UNAVAILABLE', 'The payments service did not answer in time; try again');
    if (answer.msg.headers?.get(RPC_OUTCOME_HEADER) === 'ok') return decodeJson<T>(answer.msg.data);
    const refusal = decodeJson<PaymentsRpcError>(answer.msg.data);
    if (refusal.status === 404) throw new ApiError('NOT_FOUND', refusal.error.message);
    if (refusal.status === 400 || refusal.status === 402)
      throw new ApiError('INVALID_INPUT', refusal.error.message, [
        { path: refusal.error.param ?? 'body', message: refusal.error.message },
      ]);
    if (refusal.status === 503) throw new ApiError('UNAVAILABLE', refusal.error.message);
    throw new Error(`payments ${operation} refused with ${refusal.status}: ${refusal.error.type}`);
  };
}
