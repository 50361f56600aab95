import type { Queryable } from '@platform/shared/db';

/**
 * The planner workarounds of the delivery queries, in one place. The deliveries table is a queue: its active part is
 * small when statistics are taken and large in a burst, and on servers without autovacuum the statistics may never
 * be taken again. Plans costed from such statistics, and generic plans cached while the table was small, read whole
 * indexes or the whole table where a few rows by key were wanted. Each helper here keeps one statement on the plan
 * that reads only its own rows; test/perf/claim-plans.happy.test.ts and sweep-record-plans.happy.test.ts check those plans.
 */

/**
 * The statuses of a delivery still to be attempted, as literal SQL: the partial indexes on active deliveries
 * (`where status in ('pending', 'retrying')`) can serve a query only when the planner can prove their predicate
 * from the query's text. Sent as bind parameters, the statuses are unknown to the generic plan a prepared
 * statement switches to after a few executions, and the claim fell back to scanning and sorting every delivery
 * of the endpoint.
 */
export const ACTIVE_SQL = "('pending', 'retrying')";

/**
 * "Still active" for rows a statement finds by primary key, in a form that cannot match the partial indexes'
 * predicate. A queue's active set may be small when statistics are taken and large in a burst: costed from such
 * statistics a partial index looks almost empty, and the planner chose to read all of it (every active delivery of
 * every endpoint) to find the few ids a claim names, instead of their primary keys. Every claim, hint and clear then cost time in proportion to the whole backlog.
 */
export const activeById = (alias: string) => `(${alias}.status in ${ACTIVE_SQL}) is true`;

/** The planner settings a statement here may need changed for itself, with the value every other statement has. */
const PLANNER_NORMAL = { enable_seqscan: 'on', plan_cache_mode: 'auto' } as const;

/**
 * Runs one statement of a transaction with a planner setting of its own: set just before it and put back just
 * after, the three sent together, so the transaction's other statements are planned as everywhere else. The plan a
 * prepared statement caches keeps the setting it was made under.
 */
export async function plannedWith<T>(
  tx: Queryable,
  setting: keyof typeof PLANNER_NORMAL,
  value: string,
  statement: PromiseLike<T>,
): Promise<T> {
  const [, result] = await Promise.all([
    tx`select set_config(${setting}, ${value}, true)`,
    statement,
    tx`select set_config(${setting}, ${PLANNER_NORMAL[setting]}, true)`,
  ]);
  return result;
}
