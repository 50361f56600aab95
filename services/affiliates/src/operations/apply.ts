import { programmePageApi } from '@platform/shared/api/programme-page';
import { isUniqueViolation } from '@platform/shared/db';
import { notFound } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import type { AffiliatesDeps } from '../deps.ts';
import { mailApplicationApproved, mailApplicationReceived } from '../application-mails.ts';
import { findAffiliate, findAffiliateIdByEmail } from '../queries/affiliates.ts';
import { findApprovedAffiliateIdBySlug, findProgrammeBySlug, insertApplication } from '../queries/programmes.ts';
import { presentAffiliate } from '../present.ts';
import { insertNewAffiliate } from './create.ts';

/**
 * An application from the programme page (/p/{slug}): in one transaction, the affiliate (made by the same path as
 * POST /api/v1/affiliates, with its `affiliate.created`), `pending`, or `approved` at once with its
 * `affiliate.approved` when the programme auto-approves; the application; and the mail (received, or approved with a
 * portal sign-in link). The merchant is the page's: the gateway found it by the slug, and it is checked again here.
 * An address that is already an affiliate of the merchant gets the same answer and nothing else: the page must not
 * tell anyone whether an address applied.
 */
export const applyToProgrammeOperation = (deps: AffiliatesDeps) =>
  defineOperation(programmePageApi.applyToProgramme, async (ctx, { params, body }) => {
    const programme = await findProgrammeBySlug(ctx.sql, params.slug);
    if (!programme || programme.merchant_id !== ctx.merchantId) throw notFound('programme');
    const merchantId = programme.merchant_id;
    // `created` is for the gateway's limit (only applications that make an affiliate count per e-mail domain); the
    // page's answer is the same either way.
    const received = (created: boolean) => ({ outcome: 'ok' as const, body: { received: true as const, created } });
    for (let attempt = 1; ; attempt++) {
      try {
        const made = await ctx.sql.begin(async (tx) => {
          if (await findAffiliateIdByEmail(tx, merchantId, body.email)) return null;
          // A recruit link names its affiliate by slug; only an approved affiliate recruits. Anything else is
          // ignored rather than refused: the applicant did nothing wrong.
          const parentId = body.ref ? ((await findApprovedAffiliateIdBySlug(tx, merchantId, body.ref)) ?? null) : null;
          const affiliate = await insertNewAffiliate(tx, deps, merchantId, {
            email: body.email,
            slug: undefined,
            displayName: body.name.trim(),
            status: programme.auto_approve ? 'approved' : 'pending',
            parentId,
            customCommissionRate: null,
          });
          await insertApplication(tx, {
            merchantId,
            affiliateId: affiliate.id,
            website: body.website,
            promotion: body.promotion.trim(),
          });
          if (programme.auto_approve) {
            const approved = presentAffiliate((await findAffiliate(tx, merchantId, affiliate.id))!, deps.publicBaseUrl);
            await enqueueEvents(tx, [{ merchantId, type: 'affiliate.approved', data: approved }]);
            await mailApplicationApproved(tx, deps, merchantId, affiliate);
          } else {
            await mailApplicationReceived(tx, deps, merchantId, affiliate);
          }
          return { id: affiliate.id, parent: parentId !== null };
        });
        outboxCommitted(ctx.sql);
        ctx.log.info('application received', {
          merchant_id: merchantId,
          affiliate_id: made?.id ?? null,
          known_address: made === null,
          recruited: made?.parent ?? false,
          auto_approved: made !== null && programme.auto_approve,
        });
        return received(made !== null);
      } catch (err) {
        // Another application of the same address committed first: the same answer as a known address.
        if (isUniqueViolation(err, 'affiliates_merchant_email')) return received(false);
        // A generated slug lost a race: try again, the generator now sees it taken.
        if (isUniqueViolation(err, 'affiliates_merchant_slug') && attempt < 5) continue;
        throw err;
      }
    }
  });
