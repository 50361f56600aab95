import type { MsgHdrs } from '@nats-io/nats-core';
import { decryptSecretWithAny, encryptSecret, secretPlace } from './crypto.ts';
import { withinDeadline, type Queryable, type Sql } from './db.ts';
import type { Logger } from './log.ts';

/**
 * A request that carries an Idempotency-Key reaches its service with the key's claim (the gateway's row in
 * idempotency_keys, by owner and key, held by the request's id). The service keeps its reply on that row itself,
 * after answering: whatever became of the gateway that claimed the key (it answered 503 on its own timeout, or it
 * stopped), the next request with the key is answered from the reply instead of doing the work again. A reply that
 * says nothing was done (a 5xx: INTERNAL, UNAVAILABLE, a deadline passed) is not kept; the claim is given up, so the
 * retry does the work at once.
 *
 * The reply is kept after the work's transaction, so the fact that the work committed is written inside it
 * (markCommitted): a claim marked committed never lapses into a takeover, whatever happens to the reply after the
 * commit (a crash, a pool that stalls), so a retry can never do the work a second time.
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
 * How long after the caller's deadline a claim may still be given up (not done). The gateway's claim lasts
 * RPC_TIMEOUT_MS and one second past the deadline at least (services/gateway/src/app.ts): given up within this
 * second, the retry does the work at once rather than after the claim's lease.
 */
const KEEP_WITHIN_MS = 1000;
/**
 * How long after the caller's deadline a reply may still be kept. Longer: a claim marked committed waits for its
 * reply however late (no retry takes it over), and a reply that lands on a claim no longer this request's changes
 * nothing (the update names the request).
 */
const KEEP_REPLY_WITHIN_MS = 30_000;

/**
 * The commit hook (deadline.ts withCommitHook) of a keyed request: marks the claim of `requestId` committed in the
 * same transaction as the work, so that the mark is durable exactly when the work is. Only a transaction that wrote
 * something (it has a transaction id: pg_current_xact_id_if_assigned) marks it: a read changes nothing a retry could
 * repeat. Only this request's unanswered claim: one taken over by a retry is left alone (the deadline check before
 * COMMIT keeps the work from committing after the claim's lease: the deadline comes a second earlier at least).
 */
export const markCommitted =
  (claim: IdempotencyClaim, requestId: string) =>
  (tx: Queryable): Promise<unknown> =>
    tx`
      update idempotency_keys set committed_at = coalesce(committed_at, now())
      where pg_current_xact_id_if_assigned() is not null
        and owner = ${claim.owner} and key = ${claim.key} and request_id = ${requestId} and status is null`.execute();

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
 * Keeps the service's reply on the claim of `requestId` (`done`), or gives the claim up (not done) unless it is
 * marked committed. Only the claim of this request, still unanswered: a key the gateway has answered, or a retry has
 * taken over, is left alone. Failures are logged: the gateway then stores the answer it got, or its claim lapses
 * (one not marked committed).
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
      : // A claim whose work committed stays claimed: a later failure does not undo what committed, so a retry
        // must not do it again (it is refused as in progress, as after a crash past the commit).
        sql`
          delete from idempotency_keys
          where owner = ${owner} and key = ${key} and request_id = ${requestId} and status is null
            and committed_at is null`;
    const within = reply.done ? KEEP_REPLY_WITHIN_MS : KEEP_WITHIN_MS;
    await withinDeadline(kept.execute(), Math.max(1, request.deadline + within - Date.now()));
  } catch (err) {
    deps.log.warn('idempotency key: the reply was not kept', { err: err as Error });
  }
}

function headersOf(headers: MsgHdrs): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of headers.keys()) kept[name] = headers.get(name);
  return kept;
}
