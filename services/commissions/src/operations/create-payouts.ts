import { api } from '@platform/shared/api';
import { invalidInput } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { CREATED_PAYOUTS_MAX } from '@platform/shared/schemas/payouts';
import type { CommissionsDeps } from '../deps.ts';
import { createPayouts } from '../payout-run.ts';
import { presentPayout } from '../present.ts';
import { merchantAffiliateIds } from '../queries/payouts.ts';

export const createPayoutsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.createPayouts, async (ctx, { body }) => {
    const named = body.affiliate_ids;
    const payouts = await ctx.sql.begin(async (tx) => {
      if (named) {
        // Another merchant's affiliate is answered like one that does not exist.
        const own = await merchantAffiliateIds(tx, ctx.merchantId, named);
        const unknown = named.findIndex((id) => !own.has(id));
        if (unknown >= 0) throw invalidInput(`affiliate_ids.${unknown}`, 'names no affiliate of this merchant');
      }
      return createPayouts(tx, ctx.merchantId, deps.now(), named);
    });
    ctx.log.info('payouts created', { count: payouts.length });
    // A bounded answer, however many the run created: the rest are listed by GET /api/v1/payouts.
    const shown = payouts.slice(0, CREATED_PAYOUTS_MAX).map(presentPayout);
    return { outcome: 'created', body: { data: shown, created_count: payouts.length } };
  });
