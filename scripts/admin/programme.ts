import { Value } from '@sinclair/typebox/value';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import { CommissionRule } from '@platform/shared/schemas/merchant-settings';
import {
  SETTING_KEYS,
  updateMerchantSettings,
  type SettingKey,
  type SettingsChange,
} from '@platform/shared/settings-writer';
import { UsageError } from './commands.ts';

/**
 * Operator commands for a merchant's affiliate programme: its settings (merchants.settings) and its tiers.
 * Everything is validated against the same schemas the services read with, so a value the services would ignore
 * (falling back to the default) is refused instead of stored.
 */

/**
 * `--set key=value`, repeatable. The value is JSON when it parses as JSON (numbers, arrays, objects, null), else
 * the text itself (`currency=EUR`). `commission_rules.<event_type>=<rule>` sets one rule, `=null` removes it.
 * Prints the merchant's settings in effect afterwards (defaults filled in). The writing is the dashboard's too
 * (shared/src/settings-writer.ts); its refusals are usage errors here.
 */
export async function setMerchantSettings(sql: Sql, merchantId: string, assignments: string[]) {
  if (assignments.length === 0)
    throw new UsageError(`give at least one --set key=value (keys: ${SETTING_KEYS.join(', ')})`);
  const changes = assignments.map(parseAssignment);
  try {
    return { id: merchantId, settings: await updateMerchantSettings(sql, merchantId, changes) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const detail = err.details?.[0];
    const refused = new UsageError(
      err.code === 'NOT_FOUND' ? `no merchant ${String(merchantId)}` : `${detail?.path}: ${detail?.message}`,
    );
    refused.cause = err;
    throw refused;
  }
}

function parseAssignment(text: string): SettingsChange {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set expects key=value, got ${JSON.stringify(text)}`);
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  if (key.startsWith('commission_rules.')) {
    const eventType = key.slice('commission_rules.'.length);
    if (!/^[a-z][a-z0-9_.]{0,63}$/.test(eventType))
      throw new UsageError(`commission_rules: ${JSON.stringify(eventType)} is not an event type`);
    if (value !== null && !Value.Check(CommissionRule, value)) {
      throw new UsageError(
        `commission_rules.${eventType}: must be {"kind":"percentage","rate":0..1} or {"kind":"flat","amount":"12.50"} or null`,
      );
    }
    return { kind: 'rule', eventType, rule: value };
  }
  if (!(SETTING_KEYS as string[]).includes(key))
    throw new UsageError(`unknown setting ${key} (keys: ${SETTING_KEYS.join(', ')})`);
  return { kind: 'field', key: key as SettingKey, value };
}

const RATE = /^(0(\.\d{1,6})?|1(\.0{1,6})?)$/;
const THRESHOLD = /^\d{1,16}(\.\d{1,4})?$/;

/** A tier: its commission rate (0 to 1, at most 6 decimals) and the attributed revenue that promotes into it. */
export async function createTier(sql: Sql, merchantId: string, t: { name: string; rate: string; threshold: string }) {
  const name = t.name.trim();
  if (!name || name.length > 100) throw new UsageError('--name must have 1 to 100 characters');
  if (!RATE.test(t.rate))
    throw new UsageError('--rate must be a decimal from 0 to 1 with at most 6 decimals (0.15 is 15 percent)');
  if (!THRESHOLD.test(t.threshold))
    throw new UsageError(
      "--threshold must be a non-negative decimal with at most 4 decimals, in the merchant's currency",
    );
  if (!isId('mer', merchantId)) throw new UsageError(`no merchant ${String(merchantId)}`);
  const [merchant] = await sql`select 1 from merchants where id = ${merchantId}`;
  if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
  const [row] = await sql`
    insert into tiers (id, merchant_id, name, rate, threshold)
    values (${newId('tier')}, ${merchantId}, ${name}, ${t.rate}, ${t.threshold})
    returning id, merchant_id, name, rate::text, threshold::text, created_at`;
  return row;
}

/** The merchant's tiers, lowest threshold first. */
export async function listTiers(sql: Sql, merchantId: string) {
  if (!isId('mer', merchantId)) throw new UsageError(`no merchant ${String(merchantId)}`);
  const [merchant] = await sql`select 1 from merchants where id = ${merchantId}`;
  if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
  return sql`
    select id, merchant_id, name, rate::text, threshold::text, created_at from tiers
    where merchant_id = ${merchantId} order by threshold, created_at, id`;
}
