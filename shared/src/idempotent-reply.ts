import type { MsgHdrs } from '@nats-io/nats-core';
import { decryptSecretWithAny, encryptSecret, secretPlace } from './crypto.ts';
import { withinDeadline, type Sql } from './db.ts';
import type { Logger } from './log.ts';

/**
 * A request that carries an Idempotency-Key reaches its service with the key's claim (the gateway's row in
 * idempotency_keys, by owner and key, held by the request's id). The service keeps its reply on that row itself,
 * after answering: whatever became of the gateway that claimed the key (it answered 503 on its own timeout, or it
 * stopped), the next request with the key is answered from the reply instead of doing the work again. A reply that
 * says nothing was done (a 5xx: INTERNAL, UNAVAILABLE, a deadline passed) is not kept; the claim is given up, so the
 * retry does the work at once.
 */
export interface IdempotencyClaim {
  owner: string;
  key: string;
}

/** The reply as the gateway reads it: the NATS headers it maps to HTTP (the RPC outcome) and the data. */
export interface KeptReply {
  headers: Record<string, string>;
  data: Uint8Array;
}

/**
 * How long after the caller's deadline a reply may still be kept. The gateway's claim lasts RPC_TIMEOUT_MS and one
 * second past the deadline at least (services/gateway/src/app.ts): a reply kept within this second lands on the
 * claim it belongs to, before a retry may take the key over.
 */
const KEEP_WITHIN_MS = 1000;

// AES-256-GCM (crypto.ts) under the key of this purpose, bound to the key's row (owner and key): a reply can hold a
// secret shown once (a webhook signing secret, a single-use link), as the gateway's stored answers can. Kept as the
// text of the encrypted value (base64 of the data inside), so that `admin secrets re-encrypt` moves it to a new key.
const placeOf = (claim: IdempotencyClaim) => secretPlace('idempotency-reply', claim.owner, claim.key);
const seal = (master: Buffer, claim: IdempotencyClaim, data: Uint8Array) =>
  Buffer.from(encryptSecret(master, Buffer.from(data).toString('base64'), placeOf(claim)));

/**
 * The reply's data, decrypted with the first of `keys` (the current one, then the previous ones) that opens it;
 * throws UndecryptableSecret when none does.
 */
export function openReply(keys: readonly Buffer[], claim: IdempotencyClaim, sealed: Buffer): Buffer {
  return Buffer.from(decryptSecretWithAny(keys, sealed.toString(), placeOf(claim)).plaintext, 'base64');
}

/**
 * Keeps the service's reply on the claim of `requestId` (`done`), or gives the claim up (not done). Only the claim
 * of this request, still unanswered: a key the gateway has answered, or a retry has taken over, is left alone.
 * Failures are logged: the gateway then stores the answer it got, or its claim lapses.
 */
export async function keepReply(
  deps: { sql: Sql; encryptionKey: Buffer; log: Logger },
  claim: IdempotencyClaim,
  request: { request_id: string; deadline: number },
  reply: { done: true; headers: MsgHdrs; data: Uint8Array } | { done: false },
): Promise<void> {
  const { sql } = deps;
  const { owner, key } = claim;
  const requestId = request.request_id;
  try {
    const kept = reply.done
      ? sql`
          update idempotency_keys
          set reply_headers = ${sql.json(headersOf(reply.headers))},
              reply_body = ${seal(deps.encryptionKey, claim, reply.data)}
          where owner = ${owner} and key = ${key} and request_id = ${requestId} and status is null`
      : sql`
          delete from idempotency_keys
          where owner = ${owner} and key = ${key} and request_id = ${requestId} and status is null`;
    await withinDeadline(kept.execute(), Math.max(1, request.deadline + KEEP_WITHIN_MS - Date.now()));
  } catch (err) {
    deps.log.warn('idempotency key: the reply was not kept', { err: err as Error });
  }
}

function headersOf(headers: MsgHdrs): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of headers.keys()) kept[name] = headers.get(name);
  return kept;
}
