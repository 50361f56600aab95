import type { Sql } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import { requeueSetAsideFacts } from '@platform/events/queries/analytics-set-aside';
import { UsageError } from './commands.ts';

export const ANALYTICS_USAGE = `  analytics requeue [--merchant <merchant_id>] [--id <n> …]   queue again the facts the analytics drain set aside
                                              (all, the merchant's, or these ids), once their cause is fixed`;

/** A fact's id in analytics_set_aside: a positive bigint. */
const FACT_ID = /^[1-9][0-9]{0,17}$/;

/**
 * `analytics requeue`: the facts the drain set aside (docs/ANALYTICS.md) back in its queue, to be counted by its next
 * run. Answers what was moved; nothing when none matched, or another run moved them first.
 */
export async function requeueCommand(sql: Sql, merchantId: string | undefined, ids: readonly string[] | undefined) {
  if (merchantId !== undefined && !isId('mer', merchantId))
    throw new UsageError('--merchant must be a merchant id (mer_…)');
  const bad = ids?.find((id) => !FACT_ID.test(id));
  if (bad !== undefined)
    throw new UsageError(`--id must be the id of a fact set aside (a positive integer), not "${bad}"`);
  // A transaction of its own: work with no caller, whose lock waits (on another run moving the same facts) are not
  // cut short at the API's bounds.
  const moved = await sql.begin((tx) => requeueSetAsideFacts(tx, { merchantId, ids }));
  return {
    requeued: moved.length,
    facts: moved.map((f) => ({ ...f, at: f.at.toISOString() })),
  };
}
