import type { Queryable, Sql } from '@platform/shared/db';
import type { RowPosition } from '@platform/shared/cursor';
import { createdRange, keyset, type ListParams } from './keyset.ts';

export interface AccountRow {
  id: string;
  livemode: boolean;
  type: 'express' | 'custom' | 'standard';
  country: string;
  email: string | null;
  business_type: string | null;
  merchant_id: string | null;
  metadata: Record<string, string>;
  default_currency: string;
  business_name: string | null;
  business_url: string | null;
  product_description: string | null;
  bank_last4: string | null;
  bank_routing_number: string | null;
  bank_holder_name: string | null;
  tos_accepted_at: Date | null;
  created_at: Date;
}

const COLUMNS = (sql: Queryable) => sql`
  id, livemode, type, country, email, business_type, merchant_id, metadata, default_currency, business_name,
  business_url, product_description, bank_last4, bank_routing_number, bank_holder_name, tos_accepted_at, created_at`;

export async function insertAccount(
  sql: Queryable,
  a: Pick<
    AccountRow,
    'id' | 'livemode' | 'type' | 'country' | 'email' | 'business_type' | 'merchant_id' | 'metadata' | 'default_currency'
  >,
): Promise<AccountRow> {
  const [row] = await sql<AccountRow[]>`
    insert into payment_accounts (id, livemode, type, country, email, business_type, merchant_id, metadata, default_currency)
    values (${a.id}, ${a.livemode}, ${a.type}, ${a.country}, ${a.email}, ${a.business_type}, ${a.merchant_id},
            ${sql.json(a.metadata)}, ${a.default_currency})
    returning ${COLUMNS(sql)}`;
  return row!;
}

/**
 * The merchant's own account in a mode, under a lock held until the transaction ends: of two requests to open it at
 * once, the second waits and finds the first's.
 */
export async function lockMerchantAccount(
  tx: Queryable,
  merchantId: string,
  livemode: boolean,
): Promise<AccountRow | undefined> {
  await tx`select pg_advisory_xact_lock(hashtext(${`merchant-account:${merchantId}:${livemode}`}))`;
  const [row] = await tx<AccountRow[]>`
    select ${COLUMNS(tx)} from payment_accounts where merchant_id = ${merchantId} and livemode = ${livemode}
    order by created_at desc, id desc limit 1`;
  return row;
}

export async function findAccount(sql: Queryable, livemode: boolean, id: string): Promise<AccountRow | undefined> {
  const [row] = await sql<AccountRow[]>`
    select ${COLUMNS(sql)} from payment_accounts where id = ${id} and livemode = ${livemode}`;
  return row;
}

export async function accountExists(sql: Sql, livemode: boolean, id: string): Promise<boolean> {
  const [row] = await sql`select 1 from payment_accounts where id = ${id} and livemode = ${livemode}`;
  return row !== undefined;
}

export async function accountCreatedAt(sql: Sql, livemode: boolean, id: string): Promise<Date | null> {
  const [row] = await sql<{ created_at: Date }[]>`
    select created_at from payment_accounts where id = ${id} and livemode = ${livemode}`;
  return row?.created_at ?? null;
}

export function listAccounts(sql: Sql, livemode: boolean, params: ListParams, position: RowPosition, limit: number) {
  const page = keyset(sql, position);
  return sql<AccountRow[]>`
    select ${COLUMNS(sql)} from payment_accounts
    where livemode = ${livemode} ${createdRange(sql, params.created)} ${page.where}
    ${page.order} limit ${limit}`;
}

export async function merchantExists(sql: Sql, merchantId: string): Promise<boolean> {
  const [row] = await sql`select 1 from merchants where id = ${merchantId}`;
  return row !== undefined;
}

/** What the onboarding page collected; the bank account's details encrypted, its last four digits in clear. */
export async function saveOnboarding(
  sql: Queryable,
  id: string,
  d: {
    business_name: string;
    business_url: string | null;
    product_description: string;
    bank_account_encrypted: string;
    bank_last4: string;
    bank_routing_number: string;
    bank_holder_name: string;
  },
): Promise<void> {
  await sql`
    update payment_accounts set business_name = ${d.business_name}, business_url = ${d.business_url},
      product_description = ${d.product_description}, bank_account_encrypted = ${d.bank_account_encrypted},
      bank_last4 = ${d.bank_last4}, bank_routing_number = ${d.bank_routing_number},
      bank_holder_name = ${d.bank_holder_name}, tos_accepted_at = coalesce(tos_accepted_at, now())
    where id = ${id}`;
}
