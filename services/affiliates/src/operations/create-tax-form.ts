import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import type { AffiliatesDeps } from '../deps.ts';
import { lockAffiliate } from '../queries/tax-forms.ts';
import { checkedTaxForm, recordTaxForm } from '../tax-form-store.ts';

export const createTaxFormOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.createTaxForm, async (ctx, { params, body }) => {
    if (!isId('aff', params.affiliate_id)) throw notFound('affiliate');
    const checked = checkedTaxForm(body, new Date());
    const form = await ctx.sql.begin(async (tx) => {
      if (!(await lockAffiliate(tx, ctx.merchantId, params.affiliate_id))) throw notFound('affiliate');
      return recordTaxForm(tx, deps.vaultKeys, ctx.merchantId, params.affiliate_id, body, checked);
    });
    outboxCommitted(ctx.sql);
    ctx.log.info('tax form stored', {
      affiliate_id: form.affiliate_id,
      tax_form_id: form.id,
      form_type: form.form_type,
    });
    return { outcome: 'created', body: form };
  });
