import { AsyncLocalStorage } from 'node:async_hooks';
import type postgres from 'postgres';

// The driver's own types (db.ts's Sql and Queryable are these): db.ts imports this module, not the other way round.
type Sql = postgres.Sql;
type Queryable = postgres.Sql | postgres.TransactionSql;

/**
 * The deadline of the caller an operation answers (the gateway's, epoch milliseconds): past it the gateway has
 * answered 503, so a transaction still open then must not commit. Set around an operation by the code that serves
 * it (serveOperations, the payments service's servePayments) and read by every transaction the operation opens
 * (`sql.begin` on any pool from connectDatabase, inTransaction, inOneTrip, inTwoTrips), which runs
 * assert_before_deadline (migration 025) as its last statement before COMMIT. Work with no caller (consumers,
 * sweepers, purges, migrations) has no deadline and no check.
 */
const current = new AsyncLocalStorage<number | null>();

/**
 * Work with no caller waits as long as it must: a consumer's batch that queues behind another replica's advisory
 * locks (or those of a replica that just stopped, until its backend ends) is not failed after the API's 2 s. The
 * pool's statement_timeout and lock_timeout are for the API; a transaction that runs for no caller raises them to
 * these bounds, or keeps the pool's own when those are higher or none (0).
 */
const NO_CALLER_LOCK_TIMEOUT_MS = 30_000;
const NO_CALLER_STATEMENT_TIMEOUT_MS = 60_000;
const noCallerBounds = new WeakMap<Sql, { lock: string; statement: string }>();

/** Called by connectDatabase with the pool's own timeouts (0: none). */
export function boundNoCallerWork(sql: Sql, pool: { lockTimeoutMs: number; statementTimeoutMs: number }): void {
  const raised = (ms: number, floor: number) => String(ms === 0 ? 0 : Math.max(ms, floor));
  noCallerBounds.set(sql, {
    lock: raised(pool.lockTimeoutMs, NO_CALLER_LOCK_TIMEOUT_MS),
    statement: raised(pool.statementTimeoutMs, NO_CALLER_STATEMENT_TIMEOUT_MS),
  });
}

/**
 * The first statement of a transaction on `sql` that runs for no caller: its looser bounds (set_config local to the
 * transaction). Null for a caller's transaction, which keeps the pool's bounds. Sent right after BEGIN, not awaited
 * on its own: what follows on the connection runs after it.
 */
export function noCallerOpening(sql: Sql, tx: Queryable): Promise<unknown> | null {
  if (current.getStore() !== undefined) return null;
  const bounds = noCallerBounds.get(sql);
  if (!bounds) return null;
  return tx`select set_config('lock_timeout', ${bounds.lock}, true), set_config('statement_timeout', ${bounds.statement}, true)`.execute();
}

/** Runs `work` with `deadline` as the deadline of the transactions it opens. */
export function withDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
  return current.run(deadline, work);
}

/**
 * Runs `work` for the same caller, keeping the pool's bounds, but with no deadline check on the transactions it
 * opens (null): for the write of what already happened outside the database (money a processor took), which must be
 * recorded rather than rolled back because the caller stopped waiting. Work with no caller is run as it is.
 */
export function withoutDeadline<T>(work: () => Promise<T>): Promise<T> {
  return current.getStore() === undefined ? work() : current.run(null, work);
}

/**
 * The deadline of the caller the current work answers (epoch milliseconds), or null when no caller waits (or the
 * work runs withoutDeadline): for a request this work makes in turn, which must not outlive it.
 */
export function callerDeadline(): number | null {
  return current.getStore() ?? null;
}

/**
 * The deadline check as a statement on `tx`, or null when no caller waits. Sent after the transaction's other
 * statements and right before COMMIT: it runs on the server once they are done (a statement that waited on a lock
 * included), and fails the transaction, which then rolls back, when the deadline has passed.
 */
export function deadlineCheck(tx: Queryable): Promise<unknown> | null {
  const deadline = current.getStore();
  if (deadline === undefined || deadline === null) return null;
  return tx`select assert_before_deadline(${deadline})`.execute();
}

/**
 * A statement every transaction `work` opens runs right before its deadline check and COMMIT, in the same
 * transaction: for a keyed request, the mark on its Idempotency-Key claim that its work committed
 * (idempotent-reply.ts), which must be durable exactly when the work is, never after it. Kept for transactions run
 * withoutDeadline too: work recorded past the caller's deadline is still the claim's work.
 */
const commitHooks = new AsyncLocalStorage<(tx: Queryable) => Promise<unknown>>();

/** Runs `work` with `hook` as the last statement before the deadline check of each transaction it opens. */
export function withCommitHook<T>(hook: (tx: Queryable) => Promise<unknown>, work: () => Promise<T>): Promise<T> {
  return commitHooks.run(hook, work);
}

/** The hook's statement on `tx` (sent, not awaited), or null when the work has none. */
export function commitHook(tx: Queryable): Promise<unknown> | null {
  return commitHooks.getStore()?.(tx) ?? null;
}
