import type { MerchantSettings } from '@platform/shared/schemas/merchant-settings';

/**
 * The commission terms a programme page shows applicants, computed from what the commissions service applies
 * (services/commissions/src/domain/rules.ts): the rules per event type, the default rate for the rest, the tiers'
 * rates and the levels' share of a recruit's commissions. Never typed in, so never out of date.
 */
export interface TermsTier {
  name: string;
  rate: string | number;
  threshold: string | number;
}

const percent = (rate: number | string) => `${Math.round(Number(rate) * 1e6) / 1e4}%`;
const LEVEL_NAMES = ['the affiliates you recruit', "your recruits' recruits"];

export function commissionTerms(
  settings: Pick<MerchantSettings, 'commission_rules' | 'default_rate' | 'level_rates' | 'currency'>,
  tiers: readonly TermsTier[],
): string[] {
  const lines: string[] = [];
  const rules = Object.entries(settings.commission_rules);
  for (const [eventType, rule] of rules) {
    lines.push(
      rule.kind === 'flat'
        ? `${rule.amount} ${settings.currency} for each ${eventType}`
        : `${percent(rule.rate)} of the amount of each ${eventType}`,
    );
  }
  lines.push(
    rules.length === 0
      ? `${percent(settings.default_rate)} of every sale you refer`
      : `${percent(settings.default_rate)} of the amount of every other sale you refer`,
  );
  for (const tier of tiers) {
    lines.push(
      `${percent(tier.rate)} instead once the sales you referred reach ${tier.threshold} ${settings.currency} (${tier.name})`,
    );
  }
  settings.level_rates.forEach((rate, i) => {
    if (Number(rate) > 0)
      lines.push(`${percent(rate)} of the commissions of ${i < 2 ? LEVEL_NAMES[i] : `level ${i + 1} below you`}`);
  });
  return lines;
}
