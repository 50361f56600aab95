import type { Queryable } from '@platform/shared/db';
import { ACTIVE_SQL } from './planner.ts';

export interface EndpointBacklog {
  endpointId: string;
  merchantId: string;
  deliveries: number;
}

/** The most deliveries counted for one endpoint: a larger backlog shows as this. */
const COUNT_CAP = 100_000;

/**
 * The endpoints with the most deliveries still to be attempted (pending or retrying), largest first, at most
 * `limit` of them: what the per-endpoint backlog gauge shows, read when /metrics is scraped. Each endpoint's count
 * reads only its active deliveries, through the partial index on them (never the retained history of succeeded
 * ones, which a count over the table by status made the planner scan), up to COUNT_CAP.
 * Across merchants on purpose: it is the operator's view.
 */
export async function largestBacklogs(sql: Queryable, limit: number): Promise<EndpointBacklog[]> {
  const rows = await sql<{ endpoint_id: string; merchant_id: string; deliveries: number }[]>`
    select e.id as endpoint_id, e.merchant_id, c.deliveries
    from webhook_endpoints e
    cross join lateral (
      select count(*)::int as deliveries from (
        select 1 from webhook_deliveries d
        where d.endpoint_id = e.id and d.status in ${sql.unsafe(ACTIVE_SQL)}
        limit ${COUNT_CAP}) active) c
    where c.deliveries > 0
    order by c.deliveries desc, e.id
    limit ${limit}`;
  return rows.map((r) => ({ endpointId: r.endpoint_id, merchantId: r.merchant_id, deliveries: r.deliveries }));
}

/** Why an endpoint is disabled: by its merchant, by a 410 answer, or by its consecutive failures. */
export const DISABLED_REASONS = ['manual', 'gone', 'failure_threshold'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** Disabled endpoints of every merchant, counted by reason (every reason present, 0 when none). */
export async function disabledEndpointsByReason(sql: Queryable): Promise<Record<DisabledReason, number>> {
  const rows = await sql<{ reason: DisabledReason; endpoints: number }[]>`
    select coalesce(disabled_reason, 'manual') as reason, count(*)::int as endpoints
    from webhook_endpoints where not enabled
    group by 1`;
  const counts: Record<DisabledReason, number> = { manual: 0, gone: 0, failure_threshold: 0 };
  for (const r of rows) counts[r.reason] = r.endpoints;
  return counts;
}
