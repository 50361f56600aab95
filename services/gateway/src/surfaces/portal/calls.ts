import type { ApiOperation } from '@platform/shared/api';
import { ApiError, ERROR_CODES, type ErrorCode } from '@platform/shared/errors';
import { decodeJson } from '@platform/shared/nats';
import type { GatewayConfig } from '../../config.ts';
import { forward } from '../../http/forward.ts';
import type { Requester } from '../../http/requester.ts';

/**
 * The portal asks the services' own operations (commissions and payouts lists, analytics, payout details, tax forms)
 * as the API would, with the session's merchant and always the session's affiliate as filter or path: the services
 * keep the one copy of each query. The key id is the affiliate's own id, which the affiliates service's audit of
 * payout details records as the actor.
 */
export interface PortalCaller {
  <T>(
    op: ApiOperation,
    who: { merchantId: string; affiliateId: string; requestId: string },
    input: { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown },
  ): Promise<T>;
}

export function createPortalCaller(deps: {
  config: GatewayConfig;
  requester: Requester;
  maxPayload: () => number;
}): PortalCaller {
  const { config } = deps;
  return async <T>(
    op: ApiOperation,
    who: { merchantId: string; affiliateId: string; requestId: string },
    input: { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown },
  ): Promise<T> => {
    const result = await forward(
      deps.requester,
      deps.maxPayload(),
      config.NATS_PREFIX,
      op,
      {
        request_id: who.requestId,
        merchant_id: who.merchantId,
        key_id: who.affiliateId,
        deadline: Date.now() + config.RPC_TIMEOUT_MS,
        params: input.params ?? {},
        query: input.query ?? {},
        body: input.body ?? {},
      },
      config.RPC_TIMEOUT_MS,
    );
    if (result.kind === 'ok') return decodeJson<T>(result.body);
    if (result.kind === 'no_content') return undefined as T;
    if (result.kind === 'error') {
      const code = (ERROR_CODES as readonly string[]).includes(result.error.code)
        ? (result.error.code as ErrorCode)
        : 'INTERNAL';
      throw new ApiError(code, result.error.message, result.error.details);
    }
    if (result.kind === 'too_large') throw new ApiError('INVALID_INPUT', 'The body is too large');
    throw new ApiError('UNAVAILABLE', 'The service is temporarily unavailable; try again in a moment');
  };
}
