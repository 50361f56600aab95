import type { Queryable } from '@platform/shared/db';
import type { TaxFormStatus, TaxFormType } from '@platform/shared/schemas/tax-forms';

/**
 * Locks the merchant's affiliate, so that its tax forms and payout details change one at a time. FOR NO KEY UPDATE:
 * it does not hold up the foreign-key checks of rows inserted for the affiliate meanwhile (visits, commissions).
 */
export async function lockAffiliate(sql: Queryable, merchantId: string, affiliateId: string): Promise<boolean> {
  const [row] = await sql`
    select 1 from affiliates where merchant_id = ${merchantId} and id = ${affiliateId} for no key update`;
  return row !== undefined;
}

export async function affiliateExists(sql: Queryable, merchantId: string, affiliateId: string): Promise<boolean> {
  const [row] = await sql`select 1 from affiliates where merchant_id = ${merchantId} and id = ${affiliateId}`;
  return row !== undefined;
}

/** Marks the affiliate's form in force as superseded: the one being stored replaces it. */
export async function supersedeCurrentForm(sql: Queryable, merchantId: string, affiliateId: string): Promise<void> {
  await sql`
    update tax_forms set superseded_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId} and superseded_at is null`;
}

export async function insertTaxForm(
  sql: Queryable,
  f: {
    id: string;
    merchantId: string;
    affiliateId: string;
    formType: TaxFormType;
    details: Record<string, unknown>;
    tinVaultId: string | null;
    signedOn: string;
    expiresAt: Date | null;
  },
): Promise<void> {
  await sql`
    insert into tax_forms (id, merchant_id, affiliate_id, form_type, details, tin_vault_id, signed_on, expires_at)
    values (${f.id}, ${f.merchantId}, ${f.affiliateId}, ${f.formType}, ${sql.json(f.details as never)}, ${f.tinVaultId},
            ${f.signedOn}, ${f.expiresAt})`;
  await sql`
    update affiliates set tin_vault_id = ${f.tinVaultId}, updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${f.merchantId} and id = ${f.affiliateId}`;
}

/** A stored form with what may be shown of it: the TIN only as the vault's masked value. */
export interface TaxFormRow {
  id: string;
  affiliate_id: string;
  form_type: TaxFormType;
  status: TaxFormStatus;
  legal_name: string;
  tin_type: 'ssn' | 'ein' | 'foreign' | null;
  tin_masked: string | null;
  country: string;
  signed_on: string;
  submitted_at: Date;
  expires_at: Date | null;
}

/** The affiliate's forms, newest first (or one of them by id). */
export async function listTaxForms(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  id?: string,
): Promise<TaxFormRow[]> {
  return sql<TaxFormRow[]>`
    select f.id, f.affiliate_id, f.form_type,
           case when f.superseded_at is not null then 'superseded'
                when f.expires_at is not null and f.expires_at <= now() then 'expired'
                else 'valid' end as status,
           f.details->>'legal_name' as legal_name, f.details->>'tin_type' as tin_type,
           v.masked->>'tin' as tin_masked, f.details->'address'->>'country' as country,
           f.signed_on::text as signed_on, f.submitted_at, f.expires_at
    from tax_forms f
    left join vault_secrets v on v.merchant_id = f.merchant_id and v.id = f.tin_vault_id
    where f.merchant_id = ${merchantId} and f.affiliate_id = ${affiliateId} ${id ? sql`and f.id = ${id}` : sql``}
    order by f.submitted_at desc, f.id desc`;
}

export async function setPayoutDetailsVault(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  vaultId: string,
): Promise<void> {
  await sql`
    update affiliates set payout_details_vault_id = ${vaultId}, updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and id = ${affiliateId}`;
}

/** The affiliate's payout details as the vault keeps them masked, with when they were set; undefined when none. */
export async function findMaskedPayoutDetails(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
): Promise<{ masked: Record<string, string>; created_at: Date } | undefined> {
  const [row] = await sql<{ masked: Record<string, string>; created_at: Date }[]>`
    select v.masked, v.created_at from affiliates a
    join vault_secrets v on v.merchant_id = a.merchant_id and v.id = a.payout_details_vault_id
    where a.merchant_id = ${merchantId} and a.id = ${affiliateId}`;
  return row;
}
