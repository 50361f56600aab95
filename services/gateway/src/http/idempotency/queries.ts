import type { Queryable, Sql } from '@platform/shared/db';
import type { PartitionedTable } from '@platform/shared/partitions';
import { inOneTrip, inTwoTrips } from '@platform/shared/transactions';

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
  | { kind: 'running'; fingerprint: Buffer }
  | { kind: 'answered'; fingerprint: Buffer; requestId: string; answer: StoredAnswer };

interface KeyRow {
  fingerprint: Buffer;
  request_id: string;
  status: number | null;
  headers: Record<string, string | string[]> | null;
  body: Buffer | null;
  reply_headers: Record<string, string> | null;
  reply_body: Buffer | null;
  /** Unanswered past locked_until and not marked committed: its request was abandoned. */
  lapsed: boolean;
}

/**
 * The keys that can still be live, as a condition on created_at: it confines a statement to the days that can hold
 * them (idempotency_keys is partitioned by day on created_at, migration 038), yesterday's and today's, not the days
 * made ahead. A key's created_at is its claim's transaction start, which can be after this transaction's (now()):
 * the upper bound is this statement's start, after every commit its snapshot sees.
 */
const live = (sql: Queryable) =>
  sql`created_at > now() - ${KEY_LIFETIME_HOURS} * interval '1 hour' and created_at <= statement_timestamp()`;

/**
 * Claims the key for this request: a new key, one past its lifetime, or, for the same fingerprint, one whose claim
 * was abandoned (unanswered past locked_until, and its work not marked committed by the service: shared/src/
 * idempotent-reply.ts; such a claim waits for its reply) or whose service kept its reply there (the first request's
 * gateway gave up on it, or stopped, or is about to store its answer): that reply comes with the claim, to be
 * answered instead of doing the work again, and the claim stays the first request's (its id is the one the answer
 * names and is stored under). Otherwise answers the row as it stands.
 *
 * The table has no unique key on (owner, key) (a partitioned table's would have to include created_at), so the
 * claim is serialised per key instead: a transaction-scoped advisory lock on a hash of (owner, key) comes first, then
 * the lookup, in a statement of its own whose snapshot sees a claim committed while this one waited for the lock.
 * Of two requests with one key, the second finds the first's row; a key claimed at 23:59 is found at 00:01 in
 * yesterday's partition. Writers of a claimed row that do not take the lock (storeAnswer, releaseKey, the service's
 * markCommitted and keepReply) name the claim's request: the lookup locks the row, so they wait for the claim and
 * then find the row as it left it. A taken-over claim is a new row (its created_at is the new claim's, perhaps in
 * another day) and the old one is deleted, so that a late writer of the old claim finds nothing rather than a row
 * moved to another partition (which would be an error, not a no-op).
 */
export async function claimKey(
  sql: Sql,
  claim: { owner: string; key: string; fingerprint: Buffer; requestId: string; leaseMs: number },
): Promise<KeyState> {
  const { owner, key, fingerprint, requestId, leaseMs } = claim;
  let state: KeyState = { kind: 'claimed' };
  await inTwoTrips(
    sql,
    async (tx) => {
      // Two keys whose hashes collide only wait for each other's claim, a few milliseconds.
      const locked = tx`select pg_advisory_xact_lock(hashtextextended(${owner + '\n' + key}, 0))`.execute();
      const found = tx<KeyRow[]>`
        select fingerprint, request_id, status, headers, body, reply_headers, reply_body,
               status is null and locked_until <= now() and committed_at is null as lapsed
        from idempotency_keys
        where owner = ${owner} and key = ${key} and ${live(tx)}
        for update`.execute();
      const [, [row]] = await Promise.all([locked, found]);
      return row;
    },
    (tx, row): Record<string, Promise<unknown>> => {
      const sameRequest = row?.fingerprint.equals(fingerprint) && row.status === null;
      if (row && sameRequest && row.reply_headers && row.reply_body) {
        state = {
          kind: 'claimed',
          kept: { headers: row.reply_headers, body: row.reply_body, requestId: row.request_id },
        };
        return {
          kept: tx`
            update idempotency_keys
            set locked_until = now() + ${leaseMs} * interval '1 millisecond'
            where owner = ${owner} and key = ${key} and request_id = ${row.request_id} and ${live(tx)}`.execute(),
        };
      }
      if (row && !(sameRequest && row.lapsed)) {
        state =
          row.status === null
            ? { kind: 'running', fingerprint: row.fingerprint }
            : {
                kind: 'answered',
                fingerprint: row.fingerprint,
                requestId: row.request_id,
                answer: { status: row.status, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
              };
        return {};
      }
      // No live row, or an abandoned claim to take over: this key's other rows go (past their lifetime, or the
      // abandoned one), and the claim is a new row.
      return {
        gone: tx`delete from idempotency_keys where owner = ${owner} and key = ${key}`.execute(),
        claimed: tx`
          insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
          values (${owner}, ${key}, ${fingerprint}, ${requestId}, now() + ${leaseMs} * interval '1 millisecond')`.execute(),
      };
    },
  );
  return state;
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
      where owner = ${owner} and key = ${key} and request_id = ${requestId} and ${live(tx)}`,
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
      and committed_at is null and ${live(sql)}`;
}

/**
 * Deletes at most `limit` keys past their lifetime; how many. Whole days past it are dropped instead
 * (idempotencyPartitions); this clears the rest, in the days that straddle the lifetime, to which the condition on
 * created_at confines the statement.
 */
export async function deleteExpiredKeys(sql: Sql, limit: number): Promise<number> {
  const expired = sql`created_at <= now() - ${KEY_LIFETIME_HOURS} * interval '1 hour'`;
  const deleted = await sql`
    delete from idempotency_keys where ${expired} and (owner, key, created_at) in (
      select owner, key, created_at from idempotency_keys
      where ${expired}
      order by created_at
      limit ${limit}
      for update skip locked)`;
  return deleted.count;
}

/**
 * Idempotency keys are partitioned by day on created_at (migration 038), two days made ahead; a day is dropped whole
 * once every key in it is past its lifetime (a day after the day ends). Each day's keys are indexed on (owner, key)
 * for the claim's lookup, which the parent cannot declare unique (it would have to include created_at).
 */
export const idempotencyPartitions: PartitionedTable = {
  table: 'idempotency_keys',
  period: 'day',
  keyType: 'timestamptz',
  ahead: 2,
  partitionIndexes: [{ suffix: 'owner_key', columns: 'owner, key' }],
};

/** Whole days to keep: a day's last key is past its lifetime this long after the day ends. */
export const KEY_LIFETIME_DAYS = Math.ceil(KEY_LIFETIME_HOURS / 24);
