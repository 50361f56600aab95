import postgres from 'postgres';

export type Sql = postgres.Sql<{}>;
export type TransactionSql = postgres.TransactionSql<{}>;
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
  } = {},
): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: {
      application_name: options.applicationName ?? 'affiliate-platform',
      ...(options.synchronousCommit === false ? { synchronous_commit: 'off' } : {}),
      ...(options.genericPlans ? { plan_cache_mode: 'force_generic_plan' } : {}),
    },
    // numeric and bigint come back as strings: money is never turned into a float by the driver.
    types: {},
  });
}

/** Postgres error codes the services turn into API errors. */
const PG_UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === PG_UNIQUE_VIOLATION && (constraint === undefined || e.constraint_name === constraint);
}

/**
 * The database could not be reached or dropped the connection (the driver's connection errors, a terminated backend,
 * a server starting up or shutting down): a transient outage, not a bug, which callers answer as UNAVAILABLE.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  if (!code) return false;
  return (
    code.startsWith('CONNECTION_') || // postgres.js: CONNECTION_CLOSED, CONNECTION_ENDED, CONNECTION_DESTROYED
    code === 'CONNECT_TIMEOUT' ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === 'EHOSTUNREACH' ||
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin_shutdown (pg_terminate_backend)
    code === '57P02' || // crash_shutdown
    code === '57P03' // cannot_connect_now
  );
}
