import { isCirculatingCurrency } from '@platform/shared/currencies';
import { invalidRequest } from '@platform/shared/payments/errors';

/** Stripe's rule: a metadata key set to the empty string is removed, not stored. */
export function cleanMetadata(metadata: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata ?? {}).filter(([, v]) => v !== ''));
}

/** A circulating ISO 4217 currency, as Stripe spells it (lower case). */
export function checkCurrency(currency: string, param = 'currency'): string {
  if (!isCirculatingCurrency(currency.toUpperCase()))
    throw invalidRequest(`Invalid currency: ${currency}.`, { param, code: 'parameter_invalid' });
  return currency;
}
