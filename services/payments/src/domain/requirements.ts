/**
 * What an account still owes before it may take payments and receive payouts, from what onboarding collected.
 * Payments need the business and the accepted terms; payouts need everything, the bank account included.
 */
export interface CollectedDetails {
  business_name: string | null;
  product_description: string | null;
  business_url: string | null;
  bank_last4: string | null;
  tos_accepted_at: Date | null;
}

export interface AccountStanding {
  currently_due: string[];
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  disabled_reason: string | null;
}

export function accountStanding(d: CollectedDetails): AccountStanding {
  const due: string[] = [];
  if (!d.business_name) due.push('business_profile.name');
  if (!d.product_description && !d.business_url) due.push('business_profile.product_description');
  if (!d.bank_last4) due.push('external_account');
  if (!d.tos_accepted_at) due.push('tos_acceptance.date');
  const chargesEnabled = !due.some((f) => f.startsWith('business_profile.') || f === 'tos_acceptance.date');
  return {
    currently_due: due,
    charges_enabled: chargesEnabled,
    payouts_enabled: due.length === 0,
    details_submitted: due.length === 0,
    disabled_reason: due.length === 0 ? null : 'requirements.past_due',
  };
}
