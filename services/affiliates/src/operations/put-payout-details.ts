import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { AffiliatesDeps } from '../deps.ts';
import { findAffiliate } from '../queries/affiliates.ts';
import { lockAffiliate } from '../queries/tax-forms.ts';
import { mailPayoutDetailsChanged } from '../payout-details-mails.ts';
import { apiOrigin, checkedPayoutDetails, recordPayoutDetails } from '../tax-form-store.ts';

export const putPayoutDetailsOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.putPayoutDetails, async (ctx, { params, body }) => {
    if (!isId('aff', params.affiliate_id)) throw notFound('affiliate');
    const details = checkedPayoutDetails(body);
    const masked = await ctx.sql.begin(async (tx) => {
      if (!(await lockAffiliate(tx, ctx.merchantId, params.affiliate_id))) throw notFound('affiliate');
      const origin = apiOrigin(ctx.keyId);
      const stored = await recordPayoutDetails(
        tx,
        deps.vaultKeys,
        ctx.merchantId,
        params.affiliate_id,
        details,
        origin,
      );
      if (origin.source === 'portal') {
        const affiliate = await findAffiliate(tx, ctx.merchantId, params.affiliate_id);
        await mailPayoutDetailsChanged(tx, deps, ctx.merchantId, affiliate!.email, stored);
      }
      return stored;
    });
    ctx.log.info('payout details stored', { affiliate_id: params.affiliate_id, method: masked.method });
    return { outcome: 'ok', body: masked };
  });
