import type { Queryable, Sql } from './db.ts';
import { commitHook, deadlineCheck, noCallerOpening } from './deadline.ts';

/**
 * Transactions on a reserved connection in fewer round trips than `sql.begin`, which waits for BEGIN before the
 * first statement, for each statement awaited, and for the last statement before COMMIT. Each round trip is a
 * socket write and a wake-up of the backend on each side, which on a busy machine costs more than the statements.
 * Postgres runs what arrives on one connection in order, so statements need not wait for one another's answers:
 * when one fails, those after it fail too and the COMMIT becomes a rollback.
 *
 * Each ends with the caller's deadline check right before COMMIT when it runs for a caller (deadline.ts), in the
 * same write: a transaction past the gateway's deadline rolls back. Before the check comes the work's commit hook,
 * if any (deadline.ts: a keyed request's committed mark), so that it commits with the work or not at all.
 */

/**
 * The statements of a transaction by name, in the order they are sent (an object's string keys keep the order they
 * were written in); their answers come back under the same names.
 */
type Statements<T extends Record<string, unknown>> = { [K in keyof T]: Promise<T[K]> };

/**
 * Marks a statement's failure as handled now; its outcome is still read later (awaited or settled). A statement can
 * fail before the code that reads it runs (after a `setImmediate`, or after awaiting another): when the connection
 * of the reserved handle has closed, the driver fails every later statement at once, and an unhandled rejection
 * would end the process.
 */
function observed<P extends Promise<unknown>>(statement: P): P {
  statement.catch(() => {});
  return statement;
}

/** The answers of `statements`, by name, from their settled promises (in key order). */
function answersOf<T extends Record<string, unknown>>(names: string[], values: unknown[]): T {
  const answers: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) answers[names[i]!] = values[i];
  return answers as T;
}

/**
 * BEGIN is sent with the first statement (`work` gets it as `begun`, to await together with that statement) and
 * COMMIT with the last one (`work` answers it as `last`, already queued, not awaited). Rolled back when anything
 * fails; a failed last statement's error is the one thrown.
 */
export async function inTransaction<T>(
  sql: Sql,
  work: (tx: Queryable, begun: Promise<unknown>) => Promise<{ result: T; last: Promise<unknown> }>,
): Promise<T> {
  const reserved = await sql.reserve();
  const tx = reserved as unknown as Queryable;
  let open = false;
  try {
    const begun = observed(reserved`begin`.execute());
    open = true;
    const opened = noCallerOpening(sql, tx);
    const { result, last } = await work(tx, opened ? Promise.all([begun, observed(opened)]) : begun);
    const marked = commitHook(tx);
    const checked = deadlineCheck(tx);
    const committed = reserved`commit`.execute();
    open = false;
    const [lastSettled, markSettled, checkSettled, commitSettled] = await Promise.allSettled([
      last,
      marked,
      checked,
      committed,
    ]);
    if (lastSettled.status === 'rejected') throw lastSettled.reason;
    if (markSettled.status === 'rejected') throw markSettled.reason;
    if (checkSettled.status === 'rejected') throw checkSettled.reason;
    if (commitSettled.status === 'rejected') throw commitSettled.reason;
    return result;
  } catch (err) {
    if (open) await reserved`rollback`.catch(() => {});
    throw err;
  } finally {
    reserved.release();
  }
}

/**
 * Statements known up front as one transaction in a single round trip: BEGIN, the statements and COMMIT in one
 * write. `statements` must issue each of its statements synchronously or after awaiting only that statement (one
 * statement per query function). Answers each statement's result under its name; the first error is thrown.
 */
export async function inOneTrip<T extends Record<string, unknown>>(
  sql: Sql,
  statements: (tx: Queryable) => Statements<T>,
): Promise<T> {
  const reserved = await sql.reserve();
  const tx = reserved as unknown as Queryable;
  let pending: Promise<unknown>[] = [];
  let names: string[];
  let first: number;
  try {
    // Set before any query reaches the connection, so before the driver's own immediate that writes what is
    // queued: COMMIT joins BEGIN and the statements in that write rather than leaving in one of its own.
    const queued = new Promise<void>((resolve) => setImmediate(resolve));
    pending = [observed(reserved`begin`.execute())];
    const opened = noCallerOpening(sql, tx);
    if (opened) pending.push(observed(opened));
    // The statements' answers come after BEGIN's and the opening's.
    first = pending.length;
    const named = statements(tx);
    names = Object.keys(named);
    for (const statement of Object.values<Promise<unknown>>(named)) pending.push(observed(statement));
    await queued;
    const marked = commitHook(tx);
    if (marked) pending.push(observed(marked));
    const checked = deadlineCheck(tx);
    if (checked) pending.push(observed(checked));
    pending.push(reserved`commit`.execute());
  } catch (err) {
    // Building a statement threw before COMMIT was queued: end the transaction before the connection goes back.
    await Promise.allSettled(pending);
    await reserved`rollback`.catch(() => {});
    reserved.release();
    throw err;
  }
  try {
    const settled = await Promise.allSettled(pending);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return answersOf<T>(
      names,
      settled.slice(first, first + names.length).map((s) => (s as PromiseFulfilledResult<unknown>).value),
    );
  } finally {
    reserved.release();
  }
}

/**
 * inTransaction for statements that depend on the answer of a first one: BEGIN and `first` in one round trip, then
 * the statements and COMMIT in another. Answers each statement's result under its name; the first error is thrown.
 */
export async function inTwoTrips<A, T extends Record<string, unknown>>(
  sql: Sql,
  first: (tx: Queryable) => Promise<A>,
  statements: (tx: Queryable, a: A) => Statements<T>,
): Promise<T> {
  let values!: T;
  await inTransaction(sql, async (tx, begun) => {
    const [, a] = await Promise.all([begun, first(tx)]);
    // The statements reach the connection from microtasks; COMMIT must be queued after every one of them. This
    // immediate is set before the driver's own (which writes what is queued), so COMMIT usually leaves in the same
    // write as the statements.
    const queued = new Promise<void>((resolve) => setImmediate(resolve));
    const named = statements(tx, a);
    const names = Object.keys(named);
    const all = observed(
      Promise.all(Object.values<Promise<unknown>>(named)).then((v) => {
        values = answersOf<T>(names, v);
      }),
    );
    await queued;
    return { result: undefined, last: all };
  });
  return values;
}
