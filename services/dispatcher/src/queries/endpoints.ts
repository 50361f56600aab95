import type { Queryable } from '@platform/shared/db';

export interface EndpointRow {
  id: string;
  merchant_id: string;
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: 'manual' | 'gone' | 'failure_threshold' | null;
  failure_threshold: number;
  consecutive_failures: number;
  last_success_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

// Secrets are selected only where a request is signed or a secret rotated, never by the listing queries.
const columns = (sql: Queryable) => sql`
  id, merchant_id, url, description, event_types, enabled, disabled_reason, failure_threshold,
  consecutive_failures, last_success_at, created_at, updated_at`;

export async function insertEndpoint(
  sql: Queryable,
  e: {
    id: string;
    merchantId: string;
    url: string;
    description: string;
    eventTypes: string[];
    enabled: boolean;
    failureThreshold: number;
    secretEncrypted: string;
  },
): Promise<EndpointRow> {
  const [row] = await sql<EndpointRow[]>`
    insert into webhook_endpoints (id, merchant_id, url, description, event_types, enabled, disabled_reason,
                                   failure_threshold, secret_encrypted)
    values (${e.id}, ${e.merchantId}, ${e.url}, ${e.description}, ${e.eventTypes}, ${e.enabled},
            ${e.enabled ? null : 'manual'}, ${e.failureThreshold}, ${e.secretEncrypted})
    returning ${columns(sql)}`;
  return row!;
}

export async function findEndpoint(
  sql: Queryable,
  merchantId: string,
  id: string,
  forUpdate = false,
): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    select ${columns(sql)} from webhook_endpoints
    where merchant_id = ${merchantId} and id = ${id}
    ${forUpdate ? sql`for no key update` : sql``}`;
  return row;
}

export async function listEndpoints(
  sql: Queryable,
  merchantId: string,
  page: { after?: { created_at: string; id: string }; limit: number },
): Promise<EndpointRow[]> {
  return sql<EndpointRow[]>`
    select ${columns(sql)} from webhook_endpoints
    where merchant_id = ${merchantId}
      ${page.after ? sql`and (created_at, id) < (${page.after.created_at}::timestamptz, ${page.after.id})` : sql``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function updateEndpoint(
  sql: Queryable,
  merchantId: string,
  id: string,
  changes: Partial<{
    url: string;
    description: string;
    event_types: string[];
    enabled: boolean;
    disabled_reason: string | null;
    failure_threshold: number;
    consecutive_failures: number;
  }>,
): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set ${sql(changes as Record<string, unknown>)}, updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and id = ${id}
    returning ${columns(sql)}`;
  return row;
}

/** Deliveries and attempts go with the endpoint (ON DELETE CASCADE): an in-flight attempt finds nothing to record. */
export async function deleteEndpoint(sql: Queryable, merchantId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from webhook_endpoints where merchant_id = ${merchantId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** The current secret becomes the previous one, signing alongside the new one until `graceMs` from now. */
export async function rotateEndpointSecret(
  sql: Queryable,
  merchantId: string,
  id: string,
  newSecretEncrypted: string,
  graceMs: number,
): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set
      previous_secret_encrypted = secret_encrypted,
      previous_secret_expires_at = now() + ${graceMs} * interval '1 millisecond',
      secret_encrypted = ${newSecretEncrypted},
      updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and id = ${id}
    returning ${columns(sql)}`;
  return row;
}
