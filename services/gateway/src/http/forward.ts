import type { ApiOperation } from '@platform/shared/api';
import {
  RPC_CONTENT_TYPE_HEADER,
  RPC_OUTCOME_HEADER,
  rpcSubject,
  type RpcError,
  type RpcRequest,
} from '@platform/shared/catalogue';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { Context } from '@platform/shared/tracing/context';
import type { Requester } from './requester.ts';

export type ForwardResult =
  | { kind: 'ok'; status: 200 | 201; body: Uint8Array; contentType: string }
  | { kind: 'no_content' }
  | { kind: 'error'; error: RpcError }
  | { kind: 'unavailable' }
  | { kind: 'too_large' };

/** Sends one operation to its service by request/reply and waits at most until the deadline. */
export async function forward(
  requester: Requester,
  maxPayload: number,
  prefix: string,
  op: ApiOperation,
  request: RpcRequest,
  timeoutMs: number,
  /** With tracing on, the HTTP request's trace context, which the service continues. */
  trace?: Context,
): Promise<ForwardResult> {
  const payload = encodeJson(request);
  if (payload.byteLength > maxPayload) return { kind: 'too_large' };
  const answer = await requester.request(rpcSubject(prefix, op.service, op.name), payload, timeoutMs, trace);
  // A timeout, no responders, a closed or reconnecting connection: the service cannot answer now.
  if (answer.kind !== 'reply') return { kind: 'unavailable' };
  const reply = answer.msg;
  const outcome = reply.headers?.get(RPC_OUTCOME_HEADER);
  if (outcome === 'ok' || outcome === 'created')
    return {
      kind: 'ok',
      status: outcome === 'created' ? 201 : 200,
      body: reply.data,
      contentType: reply.headers?.get(RPC_CONTENT_TYPE_HEADER) || 'application/json',
    };
  if (outcome === 'no_content') return { kind: 'no_content' };
  return { kind: 'error', error: decodeJson<RpcError>(reply.data) };
}
