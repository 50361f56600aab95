import type { Sql } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import { UsageError } from './commands.ts';

/**
 * Binding a connected account of the payment API to a merchant: its balance then shows on the merchant's dashboard,
 * and (a live account only) funds the merchant's affiliate payouts. A live key binds its own accounts with
 * metadata[merchant_id]; a test key cannot, so binding a test account is the operator's.
 */
export const PLATFORM_ACCOUNT_USAGE = `  platform-account bind <acct_id> <merchant_id>   bind a connected account (test or live) to a merchant`;

export async function bindPlatformAccount(sql: Sql, accountId: string, merchantId: string) {
  if (!isId('acct', accountId) || !isId('mer', merchantId))
    throw new UsageError('give a connected account id (acct_…) and a merchant id (mer_…)');
  const [merchant] = await sql`select 1 from merchants where id = ${merchantId}`;
  if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
  const [row] = await sql`
    update payment_accounts set merchant_id = ${merchantId} where id = ${accountId}
    returning id, livemode, merchant_id`;
  if (!row) throw new UsageError(`no connected account ${accountId}`);
  return row;
}
