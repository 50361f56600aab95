import { withDefaults } from '@platform/shared/schemas/merchant-settings';
import { updateMerchantSettings, type SettingKey } from '@platform/shared/settings-writer';
import { handle } from './define.ts';
import { audit } from './routes-audit.ts';
import { insertTier, listTiers, storedSettings, type TierRow } from './queries/programme.ts';
import { dashboardSpecs as specs } from './specs.ts';

const presentTier = (t: TierRow) => ({
  id: t.id,
  name: t.name,
  rate: Number(t.rate),
  threshold: Number(t.threshold),
  created_at: t.created_at.toISOString(),
});

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
