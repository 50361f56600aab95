import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { affiliateExists } from '../queries/tax-forms.ts';
import { maskedPayoutDetails } from '../tax-form-store.ts';

export const getPayoutDetailsOperation = () =>
  defineOperation(api.getPayoutDetails, async (ctx, { params }) => {
    if (!isId('aff', params.affiliate_id) || !(await affiliateExists(ctx.sql, ctx.merchantId, params.affiliate_id)))
      throw notFound('affiliate');
    // None set yet is a state of the affiliate, not a missing resource.
    const masked = await maskedPayoutDetails(ctx.sql, ctx.merchantId, params.affiliate_id);
    return { outcome: 'ok', body: masked ?? { method: null, updated_at: null } };
  });
