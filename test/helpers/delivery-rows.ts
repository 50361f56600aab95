import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';

/**
 * Webhook rows written straight into the database, for the tests of what the dispatcher's statements read (their
 * plans): thousands of rows in two statements, without receivers or the dispatcher.
 */

/** An endpoint of the merchant (its secret is never used); its id. */
export async function insertEndpointRow(sql: Queryable, merchantId: string, enabled = true): Promise<string> {
  const id = newId('we');
  await sql`
    insert into webhook_endpoints (id, merchant_id, url, event_types, secret_encrypted, enabled, disabled_reason)
    values (${id}, ${merchantId}, 'https://example.com/hook', ${['payout.sent']}, 'not-used-here', ${enabled}, ${enabled ? null : 'manual'})`;
  return id;
}

/**
 * `count` messages and one delivery each to `endpointId`, in the given status (pending ones due now), leased to
 * `lockedBy` for a minute when given; their ids.
 */
export async function insertDeliveryRows(
  sql: Queryable,
  merchantId: string,
  endpointId: string,
  count: number,
  status: 'pending' | 'succeeded',
  lockedBy: string | null = null,
): Promise<string[]> {
  const messages = Array.from({ length: count }, () => newId('msg'));
  const ids = Array.from({ length: count }, () => newId('dlv'));
  await sql`
    insert into webhook_messages (id, merchant_id, type, body, created_at)
    select m, ${merchantId}, 'payout.sent', '{}', now() from unnest(${messages}::text[]) as m`;
  await sql`
    insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, next_attempt_at, locked_until, locked_by)
    select d.id, d.m, ${endpointId}, ${merchantId}, ${status}, case when ${status} = 'pending' then now() end,
      case when ${lockedBy}::text is not null then now() + interval '1 minute' end, ${lockedBy}
    from unnest(${ids}::text[], ${messages}::text[]) as d (id, m)`;
  return ids;
}
