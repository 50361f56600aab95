import type { Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';

/** The dashboard's reads and writes of a merchant's programme: its settings, tiers and dashboard users. */
export interface TierRow {
  id: string;
  name: string;
  rate: string;
  threshold: string;
  created_at: Date;
}

export interface UserRow {
  id: string;
  email: string;
  created_at: Date;
}

/** The merchant's stored settings (without defaults), or undefined for no such merchant. */
export async function storedSettings(sql: Sql, merchantId: string): Promise<unknown> {
  const [row] = await sql<{ settings: unknown }[]>`select settings from merchants where id = ${merchantId}`;
  return row?.settings;
}

export const listTiers = (sql: Sql, merchantId: string) => sql<TierRow[]>`
  select id, name, rate::text, threshold::text, created_at from tiers
  where merchant_id = ${merchantId} order by threshold, created_at, id limit 200`;

export async function insertTier(
  sql: Sql,
  merchantId: string,
  tier: { name: string; rate: number | string; threshold: number | string },
): Promise<TierRow> {
  const [row] = await sql<TierRow[]>`
    insert into tiers (id, merchant_id, name, rate, threshold)
    values (${newId('tier')}, ${merchantId}, ${tier.name}, ${tier.rate}, ${tier.threshold})
    returning id, name, rate::text, threshold::text, created_at`;
  return row!;
}

export const listUsers = (sql: Sql, merchantId: string) => sql<UserRow[]>`
  select id, email, created_at from dashboard_users where merchant_id = ${merchantId} order by created_at, id limit 500`;

/** A new dashboard user of the merchant; a taken e-mail is a unique violation (23505). */
export async function insertUser(
  sql: Sql,
  merchantId: string,
  user: { email: string; passwordHash: string },
): Promise<UserRow> {
  const [row] = await sql<UserRow[]>`
    insert into dashboard_users (id, merchant_id, email, password_hash)
    values (${newId('usr')}, ${merchantId}, ${user.email}, ${user.passwordHash})
    returning id, email, created_at`;
  return row!;
}
