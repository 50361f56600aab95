import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Queryable } from '../db.ts';

/**
 * A merchant's programme settings, stored in merchants.settings (jsonb). Missing fields take the defaults below;
 * the dashboard and the operator CLI edit them, the services read them with `loadMerchantSettings`.
 */
const Rate = Type.Number({ minimum: 0, maximum: 1 });

export const CommissionRule = Type.Union([
  Type.Object({ kind: Type.Literal('percentage'), rate: Rate }, { additionalProperties: false }),
  Type.Object(
    {
      kind: Type.Literal('flat'),
      amount: Type.String({ pattern: '^\\d{1,12}(\\.\\d{1,4})?$', description: 'exact decimal' }),
    },
    { additionalProperties: false },
  ),
]);
export type CommissionRule = Static<typeof CommissionRule>;

export const MerchantSettings = Type.Object(
  {
    default_rate: Type.Number({
      minimum: 0,
      maximum: 1,
      default: 0.1,
      description: 'commission rate when no custom or tier rate applies',
    }),
    hold_days: Type.Integer({
      minimum: 0,
      maximum: 365,
      default: 30,
      description: 'pending commissions are approved when this many days have passed',
    }),
    currency: Type.String({
      pattern: '^[A-Z]{3}$',
      default: 'USD',
      description: 'applies when an event omits currency',
    }),
    attribution_window_days: Type.Integer({
      minimum: 1,
      maximum: 365,
      default: 60,
      description: 'lifetime of the _svc_sess cookie',
    }),
    level_rates: Type.Array(Rate, {
      maxItems: 5,
      default: [],
      description: 'index 0 is level 1 (the parent): a fraction of the direct commission; up to five ancestors',
    }),
    // A pattern, not format 'uri': Value.Check knows no formats (it refused every URL), and only http(s) may be a redirect target.
    landing_url: Type.Union([Type.String({ pattern: '^https?://\\S+$', maxLength: 2048 }), Type.Null()], {
      default: null,
      description: 'where /r/{slug} redirects (http or https)',
    }),
    tracking_host: Type.Union([Type.String(), Type.Null()], {
      default: null,
      description: "the merchant's own host for referral links",
    }),
    commission_rules: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_.]{0,63}$' }), CommissionRule, {
      default: {},
      description: 'per event_type; absent types get a percentage at the applicable rate when amount > 0',
    }),
    fraud_action: Type.Union([Type.Literal('hold'), Type.Literal('void')], {
      default: 'hold',
      description: 'what happens to a flagged commission',
    }),
    fraud_max_conversions_per_hour: Type.Integer({
      minimum: 1,
      default: 10,
      description: 'per visitor or IP before conversion_velocity fires',
    }),
    min_payout: Type.String({
      pattern: '^\\d{1,12}(\\.\\d{1,4})?$',
      default: '50',
      description:
        "exact decimal: an affiliate's approved commissions in one currency become a payout once their total reaches it (the same figure in every currency)",
    }),
    payout_day: Type.Union([Type.Integer({ minimum: 1, maximum: 28 }), Type.Null()], {
      default: null,
      description: 'day of the month (UTC) on which payouts are created for every affiliate; null: only on request',
    }),
    tax_form_policy: Type.Union([Type.Literal('us_threshold'), Type.Literal('required'), Type.Literal('none')], {
      default: 'us_threshold',
      description:
        'us_threshold: without a valid tax form, payouts are held once the calendar year reaches 600; required: held whenever no valid form is on file; none: never held',
    }),
  },
  { additionalProperties: false },
);
export type MerchantSettings = Static<typeof MerchantSettings>;

/** Fills defaults; a stored value that no longer fits the schema falls back to the default for that field. */
export function withDefaults(stored: unknown): MerchantSettings {
  const merged = Value.Default(MerchantSettings, structuredClone(stored ?? {})) as Record<string, unknown>;
  const defaults = Value.Default(MerchantSettings, {}) as Record<string, unknown>;
  for (const key of Object.keys(MerchantSettings.properties)) {
    if (!Value.Check(MerchantSettings.properties[key as keyof MerchantSettings], merged[key]))
      merged[key] = defaults[key];
  }
  for (const key of Object.keys(merged)) if (!(key in MerchantSettings.properties)) delete merged[key];
  return merged as MerchantSettings;
}

/**
 * Parsed settings by merchant, reused while the stored JSON text is unchanged: callers read the text in the same
 * statement as their other data, so a change applies to the very next read; only parsing and defaulting are saved.
 * Bounded: cleared when full.
 */
const parsedByMerchant = new Map<string, { text: string; settings: MerchantSettings }>();
const PARSED_MAX = 10_000;

/** `withDefaults` of a merchant's settings read as JSON text (`settings::text`), parsed once per distinct text. */
export function settingsFromText(merchantId: string, text: string): MerchantSettings {
  const cached = parsedByMerchant.get(merchantId);
  if (cached && cached.text === text) return cached.settings;
  const settings = withDefaults(JSON.parse(text));
  if (parsedByMerchant.size >= PARSED_MAX) parsedByMerchant.clear();
  parsedByMerchant.set(merchantId, { text, settings });
  return settings;
}

export async function loadMerchantSettings(sql: Queryable, merchantId: string): Promise<MerchantSettings | undefined> {
  const [row] = await sql<{ settings: unknown }[]>`select settings from merchants where id = ${merchantId}`;
  return row ? withDefaults(row.settings) : undefined;
}
