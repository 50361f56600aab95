import type { Sql } from '@platform/shared/db';

/**
 * The merchant's connected account: the one the platform created with metadata[merchant_id] set to this merchant
 * (a live one before a test one, then the newest). Read from the payment API's own table, by merchant: another
 * merchant's account is never found.
 */
export async function merchantAccount(sql: Sql, merchantId: string): Promise<{ id: string; livemode: boolean } | null> {
  const [row] = await sql<{ id: string; livemode: boolean }[]>`
    select id, livemode from payment_accounts where merchant_id = ${merchantId}
    order by livemode desc, created_at desc, id desc limit 1`;
  return row ?? null;
}
