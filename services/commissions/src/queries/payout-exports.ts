import type { Queryable } from '@platform/shared/db';

/** One call of the payouts export: who asked (an API key or a dashboard user), when, and which payouts it held. */
export interface PayoutExportRow {
  id: string;
  api_key_id: string | null;
  dashboard_user_id: string | null;
  layout: 'paypal' | 'bank';
  status: string;
  currency: string | null;
  payout_ids: string[];
  created_at: Date;
}

const columns = (sql: Queryable) => sql`
  id::text as id, api_key_id, dashboard_user_id, layout, status, currency, payout_ids, created_at`;

/**
 * Records the export and freezes the payouts it holds (exported_at, the first time only). The caller holds their row
 * locks (exportablePayouts), so no void or move slips between the file and the freeze.
 */
export async function recordExport(
  sql: Queryable,
  merchantId: string,
  e: {
    keyId: string;
    layout: 'paypal' | 'bank';
    status: string;
    currency: string | null;
    payoutIds: string[];
  },
  at: Date,
): Promise<void> {
  // The gateway names a dashboard session's caller by its user id (usr_…), an API key by its id (key_…).
  const byUser = e.keyId.startsWith('usr_');
  await sql`
    insert into payout_exports (merchant_id, api_key_id, dashboard_user_id, layout, status, currency, payout_ids,
                                created_at)
    values (${merchantId}, ${byUser ? null : e.keyId}, ${byUser ? e.keyId : null}, ${e.layout}, ${e.status},
            ${e.currency}, ${e.payoutIds}::text[], ${at})`;
  if (e.payoutIds.length > 0)
    await sql`
      update payouts set exported_at = ${at}
      where merchant_id = ${merchantId} and id = any(${e.payoutIds}::text[]) and exported_at is null`;
}

export async function listExports(
  sql: Queryable,
  merchantId: string,
  filter: { after?: { created_at: string; id: string }; limit: number },
): Promise<PayoutExportRow[]> {
  return sql<PayoutExportRow[]>`
    select ${columns(sql)} from payout_exports
    where merchant_id = ${merchantId}
      ${filter.after ? sql`and (created_at, id) < (${filter.after.created_at}::timestamptz, ${filter.after.id}::bigint)` : sql``}
    order by created_at desc, id desc
    limit ${filter.limit}`;
}
