import type { Sql } from '@platform/shared/db';
import { inOneTrip } from '@platform/shared/transactions';

/** How long a key is honoured, from the request that claimed it: Stripe's 24 hours. */
export const KEY_LIFETIME_HOURS = 24;

/** An answer as it is stored and replayed. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  /** In the table, encrypted (middleware.ts seals and unseals it); here, whatever the caller passes. */
  body: Buffer;
}

/** A key's row as the claim found it. */
export type KeyState =
  /**
   * `kept`: the reply the service kept on the key for an earlier request (sealed), and that request's id, which still
   * holds the claim: the answer is stored under it.
   */
  | { kind: 'claimed'; kept?: { headers: Record<string, string>; body: Buffer; requestId: string } }
  | { kind: 'absent' }
  | { kind: 'running'; fingerprint: Buffer }
  | { kind: 'answered'; fingerprint: Buffer; requestId: string; answer: StoredAnswer };

interface KeyRow {
  claimed: boolean;
  kept_headers: Record<string, string> | null;
  kept_body: Buffer | null;
  kept_by: string | null;
  fingerprint: Buffer | null;
  request_id: string | null;
  status: number | null;
  headers: Record<string, string | string[]> | null;
  body: Buffer | null;
}

/**
 * Claims the key for this request in one statement: a new key, one past its lifetime (not purged yet), or, for the
 * same fingerprint, one whose claim was abandoned (unanswered past locked_until, and its work not marked committed
 * by the service: shared/src/idempotent-reply.ts; such a claim waits for its reply) or whose service kept its reply
 * there (the first request's gateway gave up on it, or stopped, or is about to store its answer): that reply comes
 * with the claim, to be answered instead of doing the work again, and the claim stays the first request's (its id
 * is the one the answer names and is stored under). Otherwise answers the row as it stands. `absent` is a row that
 * the statement's snapshot could not see yet (a claim committed while this one waited on it): the caller asks again.
 */
export async function claimKey(
  sql: Sql,
  claim: { owner: string; key: string; fingerprint: Buffer; requestId: string; leaseMs: number },
): Promise<KeyState> {
  const { owner, key, fingerprint, requestId, leaseMs } = claim;
  const lifetime = sql`${KEY_LIFETIME_HOURS} * interval '1 hour'`;
  const kept = sql`(k.status is null and k.reply_headers is not null and k.created_at > now() - ${lifetime})`;
  const [row] = await sql<KeyRow[]>`
    with claimed as (
      insert into idempotency_keys as k (owner, key, fingerprint, request_id, locked_until)
      values (${owner}, ${key}, ${fingerprint}, ${requestId}, now() + ${leaseMs} * interval '1 millisecond')
      on conflict (owner, key) do update
        set fingerprint = excluded.fingerprint,
            request_id = case when ${kept} then k.request_id else excluded.request_id end,
            created_at = case when ${kept} then k.created_at else now() end,
            locked_until = excluded.locked_until, status = null, headers = null, body = null,
            reply_headers = case when ${kept} then k.reply_headers end,
            reply_body = case when ${kept} then k.reply_body end,
            committed_at = case when ${kept} then k.committed_at end
        where k.created_at <= now() - ${lifetime}
           or (k.status is null and k.fingerprint = excluded.fingerprint
               and ((k.locked_until <= now() and k.committed_at is null) or k.reply_headers is not null))
      returning k.reply_headers, k.reply_body, k.request_id
    )
    select exists (select 1 from claimed) as claimed, (select reply_headers from claimed) as kept_headers,
           (select reply_body from claimed) as kept_body, (select request_id from claimed) as kept_by,
           k.fingerprint, k.request_id, k.status, k.headers, k.body
    from (select 1) as one
    left join idempotency_keys k on k.owner = ${owner} and k.key = ${key}`;
  if (!row) return { kind: 'claimed' };
  if (row.claimed)
    return row.kept_headers && row.kept_body
      ? { kind: 'claimed', kept: { headers: row.kept_headers, body: row.kept_body, requestId: row.kept_by! } }
      : { kind: 'claimed' };
  if (!row.fingerprint) return { kind: 'absent' };
  if (row.status === null) return { kind: 'running', fingerprint: row.fingerprint };
  return {
    kind: 'answered',
    fingerprint: row.fingerprint,
    requestId: row.request_id!,
    answer: { status: row.status, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
  };
}

/**
 * Stores the answer of the request that holds the claim. Committed with a WAL flush (the gateway's pool commits
 * without one): the answer goes to the client only after it is durable, so a retry after a Postgres crash replays
 * it rather than doing the work again.
 */
export async function storeAnswer(
  sql: Sql,
  owner: string,
  key: string,
  requestId: string,
  answer: StoredAnswer,
): Promise<void> {
  await inOneTrip(sql, (tx) => ({
    durable: tx`set local synchronous_commit = on`,
    stored: tx`
      update idempotency_keys
      set status = ${answer.status}, headers = ${sql.json(answer.headers)}, body = ${answer.body},
          reply_headers = null, reply_body = null
      where owner = ${owner} and key = ${key} and request_id = ${requestId}`,
  }));
}

/**
 * Gives the key up (an answer that is not stored, a 5xx): the next request with it does the work. Not a claim the
 * service marked committed: what committed is not undone by a later failure, so the work must not be done again.
 */
export async function releaseKey(sql: Sql, owner: string, key: string, requestId: string): Promise<void> {
  await sql`
    delete from idempotency_keys
    where owner = ${owner} and key = ${key} and request_id = ${requestId} and status is null
      and committed_at is null`;
}

/** Deletes at most `limit` keys past their lifetime; how many. */
export async function deleteExpiredKeys(sql: Sql, limit: number): Promise<number> {
  const deleted = await sql`
    delete from idempotency_keys where (owner, key) in (
      select owner, key from idempotency_keys
      where created_at <= now() - ${KEY_LIFETIME_HOURS} * interval '1 hour'
      order by created_at
      limit ${limit}
      for update skip locked)`;
  return deleted.count;
}
