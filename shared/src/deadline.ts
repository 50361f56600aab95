import { AsyncLocalStorage } from 'node:async_hooks';
import type { Queryable } from './db.ts';

/**
 * The deadline of the caller an operation answers (the gateway's, epoch milliseconds): past it the gateway has
 * answered 503, so a transaction still open then must not commit. Set around an operation by the code that serves
 * it (serveOperations, the payments service's servePayments) and read by every transaction the operation opens
 * (`sql.begin` on any pool from connectDatabase, inTransaction, inOneTrip, inTwoTrips), which runs
 * assert_before_deadline (migration 025) as its last statement before COMMIT. Work with no caller (consumers,
 * sweepers, purges, migrations) has no deadline and no check.
 */
const current = new AsyncLocalStorage<number>();

/** Runs `work` with `deadline` as the deadline of the transactions it opens. */
export function withDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
  return current.run(deadline, work);
}

/**
 * The deadline check as a statement on `tx`, or null when no caller waits. Sent after the transaction's other
 * statements and right before COMMIT: it runs on the server once they are done (a statement that waited on a lock
 * included), and fails the transaction, which then rolls back, when the deadline has passed.
 */
export function deadlineCheck(tx: Queryable): Promise<unknown> | null {
  const deadline = current.getStore();
  if (deadline === undefined) return null;
  return tx`select assert_before_deadline(${deadline})`.execute();
}
