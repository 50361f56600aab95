import { isUniqueViolation, type Sql } from '@platform/shared/db';
import { ApiError, invalidInput } from '@platform/shared/errors';
import { withDefaults } from '@platform/shared/schemas/merchant-settings';
import { updateMerchantSettings, type SettingKey } from '@platform/shared/settings-writer';
import type { GatewayConfig } from '../../config.ts';
import { commissionTerms } from '../../http/commission-terms.ts';
import { handle } from './define.ts';
import { programmePageSpecs as pageSpecs } from './programme-page-specs.ts';
import { audit } from './routes-audit.ts';
import {
  findProgrammePage,
  insertTier,
  listApplications,
  listTiers,
  storedSettings,
  upsertProgrammePage,
  type TierRow,
} from './queries/programme.ts';
import { dashboardSpecs as specs } from './specs.ts';

const presentTier = (t: TierRow) => ({
  id: t.id,
  name: t.name,
  rate: Number(t.rate),
  threshold: Number(t.threshold),
  created_at: t.created_at.toISOString(),
});

/** An absolute http(s) URL with a host and no spaces (https only in production), as the database's check holds. */
function isTermsUrl(value: string, production: boolean): boolean {
  if (/\s/.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.hostname !== '' && (url.protocol === 'https:' || (!production && url.protocol === 'http:'));
}

/**
 * Settings: the programme's settings (written by the same writer as the operator CLI's `merchant settings`,
 * shared/src/settings-writer.ts) and tiers. The session's merchant only. The team is routes-team.ts's.
 */
export const programmeRoutes = [
  handle(specs.getSettings, async (ctx) => withDefaults(await storedSettings(ctx.sql, ctx.session.merchantId))),
  handle(specs.updateSettings, async (ctx, { body }) => {
    // Each field given replaces the stored one.
    const changes = Object.entries(body).map(([key, value]) => ({
      kind: 'field' as const,
      key: key as SettingKey,
      value,
    }));
    const settings = await updateMerchantSettings(ctx.sql, ctx.session.merchantId, changes, (tx) =>
      audit(ctx, tx, { action: 'settings.updated', target: null, detail: body }),
    );
    ctx.log.info('programme settings changed from the dashboard', {
      merchant_id: ctx.session.merchantId,
      user_id: ctx.session.userId,
      fields: Object.keys(body),
    });
    return settings;
  }),
  handle(specs.listTiers, async (ctx) => ({
    data: (await listTiers(ctx.sql, ctx.session.merchantId)).map(presentTier),
  })),
  handle(specs.createTier, async (ctx, { body }) =>
    presentTier(
      await ctx.sql.begin(async (tx) => {
        const tier = await insertTier(tx, ctx.session.merchantId, {
          name: body.name.trim(),
          rate: body.rate,
          threshold: body.threshold,
        });
        await audit(ctx, tx, { action: 'tier.created', target: tier.id, detail: { name: tier.name } });
        return tier;
      }),
    ),
  ),
];

/** `https://host[:port]` as browsers compare origins, or undefined for anything else (a path, http, a wildcard). */
function frameOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username || url.password || url.pathname !== '/' || url.search || url.hash)
    return undefined;
  return /^[a-z0-9.-]+$/.test(url.hostname) ? url.origin : undefined;
}

/** Settings › Programme page, and the applications waiting for a decision (docs/PORTAL.md). */
export const programmePageRoutes = (config: GatewayConfig) => {
  const production = config.APP_ENV === 'production';
  const base = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const present = async (sql: Sql, merchantId: string) => {
    const [page, stored, tiers] = await Promise.all([
      findProgrammePage(sql, merchantId),
      storedSettings(sql, merchantId),
      listTiers(sql, merchantId),
    ]);
    return {
      slug: page?.slug ?? null,
      description: page?.description ?? '',
      terms_url: page?.terms_url ?? null,
      auto_approve: page?.auto_approve ?? false,
      frame_origins: page?.frame_origins ?? [],
      commission_terms: commissionTerms(withDefaults(stored), tiers),
      page_url: page ? `${base}/p/${page.slug}` : null,
    };
  };
  return [
    handle(pageSpecs.getProgrammePage, (ctx) => present(ctx.sql, ctx.session.merchantId)),
    handle(pageSpecs.updateProgrammePage, async (ctx, { body }) => {
      const merchantId = ctx.session.merchantId;
      const termsUrl = body.terms_url === undefined ? undefined : body.terms_url;
      if (termsUrl && !isTermsUrl(termsUrl, production))
        throw invalidInput('terms_url', production ? 'must be an https URL' : 'must be an http or https URL');
      const origins: string[] = [];
      for (const [i, value] of (body.frame_origins ?? []).entries()) {
        const origin = frameOrigin(value);
        if (!origin) throw invalidInput(`frame_origins.${i}`, 'must be an origin: https://host or https://host:port');
        if (!origins.includes(origin)) origins.push(origin);
      }
      try {
        await ctx.sql.begin(async (tx) => {
          const current = await findProgrammePage(tx, merchantId);
          await upsertProgrammePage(tx, merchantId, {
            slug: body.slug,
            description: (body.description ?? current?.description ?? '').trim(),
            terms_url: termsUrl === undefined ? (current?.terms_url ?? null) : termsUrl,
            auto_approve: body.auto_approve ?? current?.auto_approve ?? false,
            frame_origins: body.frame_origins === undefined ? (current?.frame_origins ?? []) : origins,
          });
          await audit(ctx, tx, { action: 'settings.updated', target: null, detail: { programme_page: body } });
        });
      } catch (err) {
        if (isUniqueViolation(err, 'programmes_slug_key'))
          throw new ApiError(
            'CONFLICT',
            'This address is taken by another programme',
            [{ path: 'slug', message: 'is already taken' }],
            { cause: err },
          );
        throw err;
      }
      ctx.log.info('programme page changed from the dashboard', {
        merchant_id: merchantId,
        user_id: ctx.session.userId,
        fields: Object.keys(body),
      });
      return present(ctx.sql, merchantId);
    }),
    handle(pageSpecs.listApplications, async (ctx) => ({
      data: (await listApplications(ctx.sql, ctx.session.merchantId)).map((a) => ({
        affiliate_id: a.affiliate_id,
        display_name: a.display_name,
        email: a.email,
        website: a.website,
        promotion: a.promotion,
        parent_id: a.parent_id,
        applied_at: a.applied_at.toISOString(),
      })),
    })),
  ];
};
