import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';

/** The dashboard's reads and writes of a merchant's programme: its settings and tiers. */
export interface TierRow {
  id: string;
  name: string;
  rate: string;
  threshold: string;
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
  sql: Queryable,
  merchantId: string,
  tier: { name: string; rate: number | string; threshold: number | string },
): Promise<TierRow> {
  const [row] = await sql<TierRow[]>`
    insert into tiers (id, merchant_id, name, rate, threshold)
    values (${newId('tier')}, ${merchantId}, ${tier.name}, ${tier.rate}, ${tier.threshold})
    returning id, name, rate::text, threshold::text, created_at`;
  return row!;
}
