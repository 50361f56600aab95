import type { Sql } from '@platform/shared/db';

/** The merchant's webhook endpoints, as the Webhooks page needs them beyond the public API. */

/** The endpoint's encrypted signing secret; another merchant's endpoint is not found. */
export async function endpointSecret(sql: Sql, merchantId: string, endpointId: string): Promise<string | undefined> {
  const [row] = await sql<{ secret_encrypted: string }[]>`
    select secret_encrypted from webhook_endpoints where id = ${endpointId} and merchant_id = ${merchantId}`;
  return row?.secret_encrypted;
}

export async function endpointExists(sql: Sql, merchantId: string, endpointId: string): Promise<boolean> {
  const [row] = await sql`select 1 from webhook_endpoints where id = ${endpointId} and merchant_id = ${merchantId}`;
  return row !== undefined;
}

/** The rows the dispatcher's replayRange sends again: dead-lettered, created in [since, until). */
export async function countDeadLettered(
  sql: Sql,
  merchantId: string,
  endpointId: string,
  range: { since: string; until: string },
): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from webhook_deliveries
    where merchant_id = ${merchantId} and endpoint_id = ${endpointId} and status = 'dead_lettered'
      and created_at >= ${range.since}::timestamptz and created_at < ${range.until}::timestamptz`;
  return row!.count;
}
