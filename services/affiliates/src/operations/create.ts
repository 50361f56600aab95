import { randomBytes } from 'node:crypto';
import { api } from '@platform/shared/api';
import { isUniqueViolation } from '@platform/shared/db';
import { ApiError, invalidInput } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import type { AffiliatesDeps } from '../deps.ts';
import { presentAffiliate } from '../present.ts';
import { findAffiliate, findAffiliateIdByEmail, insertAffiliate, slugTaken } from '../queries/affiliates.ts';
import type { Queryable } from '@platform/shared/db';
import type { Affiliate, AffiliateStatus } from '@platform/shared/schemas/affiliates';

export const createAffiliateOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.createAffiliate, async (ctx, { body }) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const affiliate = await ctx.sql.begin(async (tx) => {
          let parentId: string | null = null;
          if (body.parent_email !== undefined) {
            parentId = (await findAffiliateIdByEmail(tx, ctx.merchantId, body.parent_email)) ?? null;
            if (!parentId)
              throw invalidInput('parent_email', 'must be the e-mail of an existing affiliate of this merchant');
          }
          return insertNewAffiliate(tx, deps, ctx.merchantId, {
            email: body.email,
            slug: body.slug,
            displayName: body.display_name,
            status: body.status ?? 'approved',
            parentId,
            customCommissionRate: body.custom_commission_rate ?? null,
          });
        });
        outboxCommitted(ctx.sql);
        ctx.log.info('affiliate created', { affiliate_id: affiliate.id });
        return { outcome: 'created', body: affiliate };
      } catch (err) {
        if (isUniqueViolation(err, 'affiliates_merchant_email'))
          throw conflict('email', 'An affiliate with this e-mail already exists', { cause: err });
        if (isUniqueViolation(err, 'affiliates_merchant_slug')) {
          // A generated slug lost a race with a concurrent create: the caller chose no slug, so this is no conflict
          // of theirs. Try again; the generator now sees the slug taken and picks another.
          if (body.slug === undefined && attempt < 5) continue;
          throw conflict('slug', 'An affiliate with this slug already exists', { cause: err });
        }
        throw err;
      }
    }
  });

/**
 * Inserts an affiliate and its `affiliate.created` event in the caller's transaction: the one path by which an
 * affiliate is made, for the API's create and the programme page's applications (apply.ts) alike. A unique
 * violation (e-mail, or a slug lost to a concurrent create) is the caller's to handle.
 */
export async function insertNewAffiliate(
  tx: Queryable,
  deps: AffiliatesDeps,
  merchantId: string,
  a: {
    email: string;
    slug: string | undefined;
    displayName: string | undefined;
    status: AffiliateStatus;
    parentId: string | null;
    customCommissionRate: number | null;
  },
): Promise<Affiliate> {
  const id = newId('aff');
  await insertAffiliate(tx, {
    id,
    merchantId,
    slug: a.slug ?? (await generateSlug(tx, merchantId, a.email)),
    email: a.email,
    displayName: a.displayName ?? displayNameFrom(a.email),
    status: a.status,
    parentId: a.parentId,
    customCommissionRate: a.customCommissionRate,
  });
  const created = presentAffiliate((await findAffiliate(tx, merchantId, id))!, deps.publicBaseUrl);
  await enqueueEvents(tx, [{ merchantId, type: 'affiliate.created', data: created }]);
  return created;
}

const conflict = (path: string, message: string, options?: ErrorOptions) =>
  new ApiError('CONFLICT', message, [{ path, message: 'is already taken' }], options);

/** "Jane.Doe+promo@example.com" → "jane-doe-promo", with a random suffix when that is taken. */
async function generateSlug(sql: Queryable, merchantId: string, email: string): Promise<string> {
  let base = email
    .split('@')[0]!
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  if (base.length < 2) base = `affiliate${base ? `-${base}` : ''}`;
  if (!(await slugTaken(sql, merchantId, base))) return base;
  for (let attempt = 0; attempt < 5; attempt++) {
    const candidate = `${base}-${randomBytes(4).toString('hex').slice(0, 6)}`;
    if (!(await slugTaken(sql, merchantId, candidate))) return candidate;
  }
  return `${base}-${randomBytes(8).toString('hex')}`;
}

function displayNameFrom(email: string): string {
  const local = email.split('@')[0] ?? email;
  const words = local.split(/[._+-]+/).filter(Boolean);
  const name = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ');
  return (name || local).slice(0, 200);
}
