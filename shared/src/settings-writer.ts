import { Value } from '@sinclair/typebox/value';
import type { Queryable, Sql } from './db.ts';
import { ApiError } from './errors.ts';
import { isId } from './ids.ts';
import { MerchantSettings, withDefaults, type CommissionRule } from './schemas/merchant-settings.ts';

/**
 * The one writer of a merchant's programme settings (merchants.settings), shared by the operator CLI's
 * `merchant settings` and the dashboard's PATCH /dashboard/api/settings, so that both lock, merge, validate and
 * store alike. Every changed field is checked against the schema the services read it with: a value they would
 * ignore (falling back to its default) is refused instead of stored.
 */
export type SettingKey = keyof typeof MerchantSettings.properties;
export const SETTING_KEYS = Object.keys(MerchantSettings.properties) as SettingKey[];

/** A field replaced as a whole, or one event type's commission rule set (or removed, with null). */
export type SettingsChange =
  { kind: 'field'; key: SettingKey; value: unknown } | { kind: 'rule'; eventType: string; rule: CommissionRule | null };

/**
 * Applies the changes in order, in one transaction holding the merchant's row, and answers the settings in effect
 * afterwards (defaults filled in). NOT_FOUND for an unknown merchant; INVALID_INPUT, one detail naming the field,
 * for a value its schema refuses (nothing is stored then). `alongside` runs in the same transaction after the write
 * (the dashboard's audit entry), so the two commit together or not at all.
 */
export async function updateMerchantSettings(
  sql: Sql,
  merchantId: string,
  changes: readonly SettingsChange[],
  alongside?: (tx: Queryable) => Promise<void>,
): Promise<MerchantSettings> {
  if (!isId('mer', merchantId)) throw new ApiError('NOT_FOUND', 'No such merchant');
  return sql.begin(async (tx) => {
    const [row] = await tx<
      { settings: Record<string, unknown> }[]
    >`select settings from merchants where id = ${merchantId} for update`;
    if (!row) throw new ApiError('NOT_FOUND', 'No such merchant');
    const stored: Record<string, unknown> = { ...row.settings };
    for (const change of changes) {
      if (change.kind === 'field') {
        stored[change.key] = change.value;
        continue;
      }
      const rules = { ...((stored['commission_rules'] as Record<string, unknown> | undefined) ?? {}) };
      if (change.rule === null) delete rules[change.eventType];
      else rules[change.eventType] = change.rule;
      stored['commission_rules'] = rules;
    }
    for (const key of new Set(changes.map((c) => (c.kind === 'field' ? c.key : 'commission_rules')))) {
      const schema = MerchantSettings.properties[key];
      if (!Value.Check(schema, stored[key])) {
        const first = Value.Errors(schema, stored[key]).First();
        throw new ApiError('INVALID_INPUT', 'The settings are invalid', [
          { path: key, message: first ? `${first.path ? `${first.path} ` : ''}${first.message}` : 'is invalid' },
        ]);
      }
    }
    await tx`update merchants set settings = ${tx.json(stored as never)}, updated_at = date_trunc('milliseconds', now()) where id = ${merchantId}`;
    await alongside?.(tx);
    return withDefaults(stored);
  });
}
