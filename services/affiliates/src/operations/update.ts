import { api } from '@platform/shared/api';
import { invalidInput, moveRefused, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import type { AffiliatesDeps } from '../deps.ts';
import { mailApplicationApproved, mailApplicationRejected } from '../application-mails.ts';
import { presentAffiliate } from '../present.ts';
import { findAffiliate, tierExists, updateAffiliate } from '../queries/affiliates.ts';
import { endPortalAccess } from '../queries/portal-access.ts';

/**
 * The status moves of the product: anything else is refused. Staying put is allowed and changes nothing. An
 * application (pending) is approved or rejected; a rejected affiliate never earns and its links do not track, and
 * rejection is final (a new application needs a new address, or the merchant's own POST).
 */
const MOVES: Record<AffiliateStatus, AffiliateStatus[]> = {
  pending: ['approved', 'rejected', 'suspended'],
  approved: ['suspended'],
  rejected: [],
  suspended: ['approved'],
};

export const updateAffiliateOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.updateAffiliate, async (ctx, { params, body }) => {
    if (!isId('aff', params.affiliate_id)) throw notFound('affiliate');
    const updated = await ctx.sql.begin(async (tx) => {
      const current = await findAffiliate(tx, ctx.merchantId, params.affiliate_id, true);
      if (!current) throw notFound('affiliate');
      const moving = body.status !== undefined && body.status !== current.status;
      if (moving && !MOVES[current.status].includes(body.status!)) {
        throw moveRefused('affiliate', current.status, body.status!, MOVES[current.status]);
      }
      if (
        body.tier_id !== undefined &&
        body.tier_id !== null &&
        !(isId('tier', body.tier_id) && (await tierExists(tx, ctx.merchantId, body.tier_id)))
      ) {
        throw invalidInput('tier_id', 'is not a tier of this merchant');
      }
      await updateAffiliate(tx, ctx.merchantId, current.id, body);
      const after = presentAffiliate((await findAffiliate(tx, ctx.merchantId, current.id))!, deps.publicBaseUrl);
      if (moving && (after.status === 'approved' || after.status === 'suspended')) {
        await enqueueEvents(tx, [{ merchantId: ctx.merchantId, type: `affiliate.${after.status}`, data: after }]);
      }
      // The applicant hears the decision in the same transaction (docs/PORTAL.md). The contract's twelve webhook
      // events have no affiliate.rejected, so a rejection is a mail only.
      if (moving && current.status === 'pending' && after.status === 'approved')
        await mailApplicationApproved(tx, deps, ctx.merchantId, after);
      if (moving && after.status === 'rejected') await mailApplicationRejected(tx, deps, ctx.merchantId, after);
      if (moving && (after.status === 'suspended' || after.status === 'rejected'))
        await endPortalAccess(tx, ctx.merchantId, current.id);
      return after;
    });
    outboxCommitted(ctx.sql);
    ctx.log.info('affiliate updated', { affiliate_id: updated.id, fields: Object.keys(body) });
    return { outcome: 'ok', body: updated };
  });
