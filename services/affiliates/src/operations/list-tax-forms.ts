import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { affiliateExists, listTaxForms } from '../queries/tax-forms.ts';
import { presentTaxForm } from '../tax-form-store.ts';

export const listTaxFormsOperation = () =>
  defineOperation(api.listTaxForms, async (ctx, { params }) => {
    if (!isId('aff', params.affiliate_id) || !(await affiliateExists(ctx.sql, ctx.merchantId, params.affiliate_id)))
      throw notFound('affiliate');
    const rows = await listTaxForms(ctx.sql, ctx.merchantId, params.affiliate_id);
    return { outcome: 'ok', body: { data: rows.map(presentTaxForm) } };
  });
