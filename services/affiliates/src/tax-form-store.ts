import { ApiError, type ErrorDetail } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import { enqueueEvents } from '@platform/shared/outbox';
import { releaseTaxFormHolds } from '@platform/shared/payout-holds';
import type { Queryable, TransactionSql } from '@platform/shared/db';
import type {
  MaskedPayoutDetails,
  PayoutDetailsBody,
  PayoutDetailsSource,
  TaxForm,
  TaxFormBody,
} from '@platform/shared/schemas/tax-forms';
import { maskLastFour, storeSecret } from '@platform/shared/vault';
import { checkPayoutDetails, checkTaxForm, taxFormExpiry } from './domain/tax-forms.ts';
import {
  findMaskedPayoutDetails,
  insertTaxForm,
  listTaxForms,
  setPayoutDetailsVault,
  supersedeCurrentForm,
  type TaxFormRow,
} from './queries/tax-forms.ts';
import { insertPayoutDetailsChange } from './queries/payout-details-changes.ts';
import { supersedeUnreferencedSecrets } from './queries/vault.ts';

/**
 * Storing a tax form or payout details, for the API's operations and the onboarding page alike. The caller holds the
 * affiliate's row lock (queries/tax-forms.ts lockAffiliate) in `tx`. Secrets go to the vault encrypted; what is kept
 * beside them, returned and emitted holds no more of them than their last four characters.
 */

const invalid = (problems: ErrorDetail[], prefix: string) =>
  new ApiError(
    'INVALID_INPUT',
    'The request is invalid',
    problems.map((p) => ({ path: prefix + p.path, message: p.message })),
  );

/** Checks a form's rules; throws INVALID_INPUT with each problem's path (under `prefix`, e.g. "tax_form."). */
export function checkedTaxForm(form: TaxFormBody, now: Date, prefix = '') {
  const checked = checkTaxForm(form, now);
  if ('problems' in checked) throw invalid(checked.problems, prefix);
  return checked;
}

export function checkedPayoutDetails(body: PayoutDetailsBody, prefix = '') {
  const checked = checkPayoutDetails(body);
  if ('problems' in checked) throw invalid(checked.problems, prefix);
  return checked.details;
}

/**
 * Stores a checked form as the affiliate's form in force (the one before is superseded), releases the payouts held
 * for want of one, and writes tax_form.submitted to the outbox in the same transaction: affiliate, form type and
 * time, never the TIN.
 */
export async function recordTaxForm(
  tx: TransactionSql,
  keys: readonly Buffer[],
  merchantId: string,
  affiliateId: string,
  form: TaxFormBody,
  checked: ReturnType<typeof checkedTaxForm>,
): Promise<TaxForm> {
  const { tin: _tin, foreign_tin: _foreignTin, ...kept } = form as TaxFormBody & { tin?: string; foreign_tin?: string };
  let tinVaultId: string | null = null;
  if (checked.tin) {
    tinVaultId = await storeSecret(tx, keys, {
      merchantId,
      affiliateId,
      kind: checked.tin.type === 'foreign' ? 'foreign_tin' : 'tin',
      plaintext: checked.tin.value,
      masked: { tin: maskLastFour(checked.tin.value) },
    });
  }
  await supersedeCurrentForm(tx, merchantId, affiliateId);
  const id = newId('txf');
  await insertTaxForm(tx, {
    id,
    merchantId,
    affiliateId,
    formType: form.form_type,
    details: { ...kept, tin_type: checked.tin?.type ?? null },
    tinVaultId,
    signedOn: form.signed_on,
    expiresAt: taxFormExpiry(form.form_type, form.signed_on),
  });
  await supersedeUnreferencedSecrets(tx, merchantId, affiliateId);
  const stored = presentTaxForm((await listTaxForms(tx, merchantId, affiliateId, id))[0]!);
  // Payouts held for want of a form may be sent from now on, committed with the form.
  if (stored.status === 'valid') await releaseTaxFormHolds(tx, merchantId, affiliateId);
  await enqueueEvents(tx, [
    {
      merchantId,
      type: 'tax_form.submitted',
      data: { affiliate_id: affiliateId, form_type: stored.form_type, submitted_at: stored.submitted_at },
    },
  ]);
  return stored;
}

/** Through what, and by whom when known, payout details are changed: what their audit row says. */
interface PayoutDetailsOrigin {
  source: PayoutDetailsSource;
  /** key_… (api), usr_… (dashboard), obl_… (onboarding link), aff_… (portal); null when unknown. */
  actorId: string | null;
}

/** The origin of an API operation's change: the gateway's key id is a dashboard user's for the dashboard's calls. */
export function apiOrigin(keyId: string): PayoutDetailsOrigin {
  if (isId('usr', keyId)) return { source: 'dashboard', actorId: keyId };
  // The affiliate portal asks as the affiliate itself (gateway portal/calls.ts), through a fresh e-mailed link.
  if (isId('aff', keyId)) return { source: 'portal', actorId: keyId };
  return { source: 'api', actorId: isId('key', keyId) ? keyId : null };
}

/**
 * Stores checked payout details as the affiliate's, replacing the ones before (their vault row superseded, kept for
 * the retention), with an audit row of the change, masked, in the same transaction.
 */
export async function recordPayoutDetails(
  tx: TransactionSql,
  keys: readonly Buffer[],
  merchantId: string,
  affiliateId: string,
  details: ReturnType<typeof checkedPayoutDetails>,
  origin: PayoutDetailsOrigin,
): Promise<MaskedPayoutDetails> {
  const before = await findMaskedPayoutDetails(tx, merchantId, affiliateId);
  const masked: Record<string, string> = { method: details.method };
  for (const [field, value] of Object.entries(details)) if (field !== 'method') masked[field] = maskLastFour(value);
  const vaultId = await storeSecret(tx, keys, {
    merchantId,
    affiliateId,
    kind: 'payout_details',
    plaintext: JSON.stringify(details),
    masked,
  });
  await setPayoutDetailsVault(tx, merchantId, affiliateId, vaultId);
  await supersedeUnreferencedSecrets(tx, merchantId, affiliateId);
  await insertPayoutDetailsChange(tx, {
    id: newId('pdc'),
    merchantId,
    affiliateId,
    source: origin.source,
    actorId: origin.actorId,
    before: before?.masked ?? null,
    after: masked,
  });
  return (await maskedPayoutDetails(tx, merchantId, affiliateId))!;
}

export async function maskedPayoutDetails(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
): Promise<MaskedPayoutDetails | null> {
  const row = await findMaskedPayoutDetails(sql, merchantId, affiliateId);
  if (!row) return null;
  return { ...(row.masked as MaskedPayoutDetails), updated_at: row.created_at.toISOString() };
}

export function presentTaxForm(row: TaxFormRow): TaxForm {
  return {
    id: row.id,
    affiliate_id: row.affiliate_id,
    form_type: row.form_type,
    status: row.status,
    legal_name: row.legal_name,
    tin_type: row.tin_type,
    tin_masked: row.tin_masked,
    country: row.country,
    signed_on: row.signed_on,
    submitted_at: row.submitted_at.toISOString(),
    expires_at: row.expires_at ? row.expires_at.toISOString() : null,
  };
}
