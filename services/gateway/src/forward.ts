import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { ApiOperation } from '@platform/shared/api';
import { RPC_OUTCOME_HEADER, rpcSubject, type RpcError, type RpcRequest } from '@platform/shared/catalogue';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import { createTurnBatch } from '@platform/shared/turn-batch';

/** Requests that arrive in one turn of the event loop go to NATS in one socket write. */
const inThisTurn = createTurnBatch();

export type ForwardResult =
  | { kind: 'ok'; status: 200 | 201; body: Uint8Array }
  | { kind: 'no_content' }
  | { kind: 'error'; error: RpcError }
  | { kind: 'unavailable' }
  | { kind: 'too_large' };

/** Sends one operation to its service by request/reply and waits at most until the deadline. */
export async function forward(
  nc: NatsConnection,
  prefix: string,
  op: ApiOperation,
  request: RpcRequest,
  timeoutMs: number,
): Promise<ForwardResult> {
  const payload = encodeJson(request);
  if (payload.byteLength > nc.info!.max_payload) return { kind: 'too_large' };
  let reply;
  try {
    const subject = rpcSubject(prefix, op.service, op.name);
    reply = await new Promise<Msg>((resolve, reject) => inThisTurn(() => nc.request(subject, payload, { timeout: timeoutMs }).then(resolve, reject)));
  } catch {
    // Timeout, no responders, a closed or reconnecting connection: the service cannot answer now.
    return { kind: 'unavailable' };
  }
  const outcome = reply.headers?.get(RPC_OUTCOME_HEADER);
  if (outcome === 'ok' || outcome === 'created') return { kind: 'ok', status: outcome === 'created' ? 201 : 200, body: reply.data };
  if (outcome === 'no_content') return { kind: 'no_content' };
  return { kind: 'error', error: decodeJson<RpcError>(reply.data) };
}
