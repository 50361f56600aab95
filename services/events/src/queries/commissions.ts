import type { Queryable } from '@platform/shared/db';

/**
 * The commissions service's table, read here for one thing only: the ids of the commissions each event yielded,
 * which GET /api/v1/events answers with the event (docs/ARCHITECTURE.md). Read-only, like the affiliates this
 * service reads: what the rows mean, and every write, stay the commissions service's. An event has one commission a
 * level (the unique index on (merchant_id, event_id, level) of migration 003, which this reads), so at most six.
 */
export async function commissionIdsOfEvents(
  sql: Queryable,
  merchantId: string,
  eventIds: string[],
): Promise<Map<string, string[]>> {
  if (eventIds.length === 0) return new Map();
  const rows = await sql<{ event_id: string; ids: string[] }[]>`
    select event_id, array_agg(id order by level) as ids from commissions
    where merchant_id = ${merchantId} and event_id = any(${eventIds}::text[])
    group by event_id`;
  return new Map(rows.map((r) => [r.event_id, r.ids]));
}
