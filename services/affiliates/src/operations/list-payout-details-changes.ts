import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { PayoutDetailsChange } from '@platform/shared/schemas/tax-forms';
import type { AffiliatesDeps } from '../deps.ts';
import { listPayoutDetailsChanges, type PayoutDetailsChangeRow } from '../queries/payout-details-changes.ts';
import { affiliateExists } from '../queries/tax-forms.ts';

/** The audit of an affiliate's payout-detail changes, newest first, keyset-paged like every list of the API. */
export const listPayoutDetailsChangesOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.listPayoutDetailsChanges, async (ctx, { params, query }) => {
    if (!isId('aff', params.affiliate_id) || !(await affiliateExists(ctx.sql, ctx.merchantId, params.affiliate_id)))
      throw notFound('affiliate');
    return {
      outcome: 'ok',
      body: await keysetPage({
        key: deps.cursorKey,
        scope: {
          merchantId: ctx.merchantId,
          list: 'payout_details_changes',
          filters: { affiliate: params.affiliate_id },
        },
        cursor: query.cursor,
        limit: query.limit ?? 25,
        fetch: (after, limit) =>
          listPayoutDetailsChanges(ctx.sql, ctx.merchantId, params.affiliate_id, { after, limit }),
        present,
      }),
    };
  });

function present(row: PayoutDetailsChangeRow): PayoutDetailsChange {
  return {
    id: row.id,
    affiliate_id: row.affiliate_id,
    changed_at: row.created_at.toISOString(),
    source: row.source,
    actor_id: row.actor_id,
    before: row.masked_before as PayoutDetailsChange['before'],
    after: row.masked_after as PayoutDetailsChange['after'],
  };
}
