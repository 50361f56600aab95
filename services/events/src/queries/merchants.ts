import type { Queryable } from '@platform/shared/db';
import { withDefaults, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';

export interface MerchantWithSettings {
  id: string;
  settings: MerchantSettings;
}

export async function findMerchant(sql: Queryable, id: string): Promise<MerchantWithSettings | undefined> {
  const [row] = await sql<{ id: string; settings: unknown }[]>`select id, settings from merchants where id = ${id}`;
  return row ? { id: row.id, settings: withDefaults(row.settings) } : undefined;
}

/**
 * The merchant whose settings.tracking_host is `host` (case-insensitive). Two merchants claiming one host is a
 * misconfiguration: neither is answered, rather than crediting visits to the wrong one.
 */
export async function findMerchantByTrackingHost(
  sql: Queryable,
  host: string,
): Promise<MerchantWithSettings | undefined> {
  const rows = await sql<{ id: string; settings: unknown }[]>`
    select id, settings from merchants where lower(settings ->> 'tracking_host') = lower(${host}) limit 2`;
  return rows.length === 1 ? { id: rows[0]!.id, settings: withDefaults(rows[0]!.settings) } : undefined;
}
