import type { Queryable, Sql } from '@platform/shared/db';

type Statements<T extends unknown[]> = { [K in keyof T]: Promise<T[K]> };

/**
 * Runs statements known up front as one transaction in a single round trip: BEGIN, the statements and COMMIT go to
 * a reserved connection without waiting for one another's answers, and Postgres runs them in order. `sql.begin`
 * waits for BEGIN, then for each statement awaited, then for COMMIT: each round trip a wait for a busy machine to
 * schedule the backend, which is most of the time a short transaction takes. `statements` must issue each of its
 * statements synchronously or after awaiting only that statement (one statement per query function). When a
 * statement fails, those after it fail too and the COMMIT rolls the transaction back; the first error is thrown.
 */
export async function inOneTrip<T extends unknown[]>(sql: Sql, statements: (tx: Queryable) => Statements<T>): Promise<T> {
  const reserved = await sql.reserve();
  const tx = reserved as unknown as Queryable;
  let pending: Promise<unknown>[] = [];
  try {
    // Set before any query reaches the connection, so before the driver's own immediate that writes what is
    // queued: COMMIT joins BEGIN and the statements in that write rather than leaving in one of its own.
    const queued = new Promise<void>((resolve) => setImmediate(resolve));
    pending = [reserved`begin`.execute()];
    pending.push(...statements(tx));
    await queued;
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
    return settled.slice(1, -1).map((s) => (s as PromiseFulfilledResult<unknown>).value) as T;
  } finally {
    reserved.release();
  }
}

/**
 * `inOneTrip` for a transaction whose statements depend on the answer of its first one: BEGIN and `first` in one
 * round trip, then the statements and COMMIT in another.
 */
export async function inTwoTrips<A, T extends unknown[]>(
  sql: Sql,
  first: (tx: Queryable) => Promise<A>,
  statements: (tx: Queryable, a: A) => Statements<T>,
): Promise<T> {
  const reserved = await sql.reserve();
  const tx = reserved as unknown as Queryable;
  let open = false;
  try {
    const begin = reserved`begin`.execute();
    open = true;
    const a = await Promise.all([begin, first(tx)]).then(([, x]) => x);
    // The statements reach the connection from microtasks; COMMIT must be queued after every one of them. This
    // immediate is set before the driver's own (which writes what is queued), so COMMIT usually leaves in the same
    // write as the statements.
    const queued = new Promise<void>((resolve) => setImmediate(resolve));
    const pending = statements(tx, a);
    await queued;
    const commit = reserved`commit`.execute();
    const settled = await Promise.allSettled([...pending, commit]);
    open = false;
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.slice(0, -1).map((s) => (s as PromiseFulfilledResult<unknown>).value) as T;
  } catch (err) {
    // The first statement failed (or BEGIN): end the transaction before the connection goes back to the pool.
    if (open) await reserved`rollback`.catch(() => {});
    throw err;
  } finally {
    reserved.release();
  }
}
