import type { Queryable } from '@platform/shared/db';
import { ACTIVE_SQL } from './planner.ts';

export interface EndpointBacklog {
  endpointId: string;
  merchantId: string;
  deliveries: number;
}

/**
 * The endpoints with the most deliveries still to be attempted (pending or retrying), largest first, at most
 * `limit` of them: what the per-endpoint backlog gauge shows. Read when /metrics is scraped, through the partial
 * index on active deliveries; a healthy platform has few, a failing endpoint's backlog is counted in full.
 * Across merchants on purpose: it is the operator's view.
 */
export async function largestBacklogs(sql: Queryable, limit: number): Promise<EndpointBacklog[]> {
  const rows = await sql<{ endpoint_id: string; merchant_id: string; deliveries: number }[]>`
    select b.endpoint_id, e.merchant_id, b.deliveries
    from (select endpoint_id, count(*)::int as deliveries from webhook_deliveries
          where status in ${sql.unsafe(ACTIVE_SQL)}
          group by endpoint_id
          order by count(*) desc, endpoint_id
          limit ${limit}) b
    join webhook_endpoints e on e.id = b.endpoint_id
    order by b.deliveries desc, b.endpoint_id`;
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
