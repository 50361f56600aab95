import postgres from 'postgres';
import { boundNoCallerWork, commitHook, deadlineCheck, noCallerOpening } from './deadline.ts';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;
/** Either the pool or a transaction: query modules accept both so that callers choose the transaction. */
export type Queryable = Sql | TransactionSql;

export function connectDatabase(
  url: string,
  options: {
    max?: number;
    applicationName?: string;
    /** false: commits return before their WAL is flushed (for counters whose last few hundred ms may be lost in a crash). */
    synchronousCommit?: boolean;
    /**
     * true: every prepared statement uses its generic plan from its first run (plan_cache_mode force_generic_plan).
     * For a pool of its own that runs only statements whose generic plan is right whatever their parameters, which
     * Postgres would otherwise plan afresh on every call (see the events service's attribution read).
     */
    genericPlans?: boolean;
    /**
     * statement_timeout and lock_timeout of every connection (0: none, for maintenance that may run long). Below the
     * gateway's RPC_TIMEOUT_MS, so that a statement stuck behind a lock or a slow plan fails, and its operation
     * answers 503, while the caller still waits, rather than holding locks after it gave up.
     */
    statementTimeoutMs?: number;
    lockTimeoutMs?: number;
  } = {},
): Sql {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: {
      application_name: options.applicationName ?? 'affiliate-platform',
      ...(options.synchronousCommit === false ? { synchronous_commit: 'off' } : {}),
      ...(options.genericPlans ? { plan_cache_mode: 'force_generic_plan' } : {}),
      statement_timeout: options.statementTimeoutMs ?? DATABASE_STATEMENT_TIMEOUT_DEFAULT_MS,
      lock_timeout: options.lockTimeoutMs ?? DATABASE_LOCK_TIMEOUT_DEFAULT_MS,
    },
    // numeric and bigint come back as strings: money is never turned into a float by the driver.
    types: {},
    // A server that does not answer (a dropped route, a firewall that swallows packets: the connect or the startup
    // never answered) fails the connection attempt, and with it the query it was opened for, after 5 s instead of
    // the driver's 30.
    connect_timeout: CONNECT_TIMEOUT_S,
    // The driver waits before reconnecting after a failed connection, 3^n / 100 s for the pool's n-th failure in a
    // row, up to 20 s; n is reset only by a connection that succeeds. During an outage of a few seconds n reaches 7
    // or more, so once the server was back the pool waited up to 20 s more before trying again, with every query
    // queued meanwhile (test/resilience/postgres-unreachable.errors.test.ts). Capped at 1 s: the pool is back within a
    // second of the server, and a server that refuses connections sees at most one attempt a second per connection.
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 1),
  });
  boundNoCallerWork(sql, {
    lockTimeoutMs: options.lockTimeoutMs ?? DATABASE_LOCK_TIMEOUT_DEFAULT_MS,
    statementTimeoutMs: options.statementTimeoutMs ?? DATABASE_STATEMENT_TIMEOUT_DEFAULT_MS,
  });
  checkDeadlineBeforeCommit(sql);
  return sql;
}

/** The pools' statement_timeout and lock_timeout unless told (DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_LOCK_TIMEOUT_MS). */
export const DATABASE_STATEMENT_TIMEOUT_DEFAULT_MS = 4000;
export const DATABASE_LOCK_TIMEOUT_DEFAULT_MS = 2000;

/**
 * Every `sql.begin` of the pool ends with the caller's deadline check (deadline.ts) when it runs for a caller: the
 * check is the transaction's last statement, so a transaction past its caller's deadline rolls back instead of
 * committing after the gateway answered 503. One that runs for no caller starts by raising its bounds instead.
 */
function checkDeadlineBeforeCommit(sql: Sql): void {
  type Work = (tx: TransactionSql) => unknown;
  const begin = sql.begin.bind(sql) as (...args: unknown[]) => Promise<unknown>;
  (sql as { begin: unknown }).begin = (...args: unknown[]) => {
    const work = args.pop() as Work;
    return begin(...args, async (tx: TransactionSql) => {
      const opened = noCallerOpening(sql, tx);
      opened?.catch(() => {});
      let result = await work(tx);
      // postgres.js awaits an array of queries a transaction answers; so must the check, which comes after them.
      if (Array.isArray(result)) result = await Promise.all(result);
      await opened;
      // The work's commit hook (a keyed request's committed mark, idempotent-reply.ts) commits with it or not at all.
      await commitHook(tx);
      await deadlineCheck(tx);
      return result;
    });
  };
}

/** Seconds a connection attempt may take, TCP connect to ready for queries (connectDatabase). */
export const CONNECT_TIMEOUT_S = 5;

/** The error of database work that did not finish within its deadline (withinDeadline): the database is unavailable. */
export class DatabaseDeadlineError extends Error {
  readonly code = 'DATABASE_DEADLINE';
  constructor(ms: number, options?: ErrorOptions) {
    super(`the database did not answer within ${ms} ms`, options);
  }
}

/**
 * `work`, or DatabaseDeadlineError after `ms`. The driver has no deadline of its own: a query sent on a connection
 * whose server went silent waits until the network gives up (minutes), and a query queued while the server is
 * unreachable waits for a connection. Work that answers a caller within a bound races it here; the work itself goes
 * on (its late outcome is dropped).
 */
export function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseDeadlineError(ms)), ms);
  });
  work.catch(() => {}).finally(() => clearTimeout(timer));
  return Promise.race([work, expired]);
}

/** Postgres error codes the services turn into API errors. */
const PG_UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === PG_UNIQUE_VIOLATION && (constraint === undefined || e.constraint_name === constraint);
}

/**
 * The database could not be reached or dropped the connection (the driver's connection errors, a terminated backend,
 * a server starting up or shutting down), did not do the work in time (a statement or lock timeout, the caller's
 * deadline), or rolled the transaction back to let a concurrent one through (a deadlock or serialization failure,
 * which the same request sent again gets past): transient, not a bug in the request, which callers answer as
 * UNAVAILABLE.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  if (!code) return false;
  return (
    code.startsWith('CONNECTION_') || // postgres.js: CONNECTION_CLOSED, CONNECTION_ENDED, CONNECTION_DESTROYED
    code === 'CONNECT_TIMEOUT' ||
    code === 'DATABASE_DEADLINE' || // withinDeadline
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' || // a write on a socket the server closed (a backend terminated under it)
    code === 'ETIMEDOUT' ||
    code === '53300' || // too_many_connections: the server is full, as unavailable for now as one that is down
    code === 'EHOSTUNREACH' ||
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin_shutdown (pg_terminate_backend)
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now
    // Not done in time, and rolled back: statement_timeout, or the caller's deadline (assert_before_deadline) ...
    code === '57014' || // query_canceled
    code === '55P03' || // ... or lock_timeout (lock_not_available)
    isRolledBackForAnother(err)
  );
}

/** Postgres rolled the transaction back to let a concurrent one through: a deadlock or a serialization failure. */
export function isRolledBackForAnother(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === '40P01' || code === '40001';
}
