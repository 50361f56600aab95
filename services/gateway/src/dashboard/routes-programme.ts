import { ApiError } from '@platform/shared/errors';
import { withDefaults } from '@platform/shared/schemas/merchant-settings';
import { updateMerchantSettings, type SettingKey } from '@platform/shared/settings-writer';
import { handle } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { insertTier, insertUser, listTiers, listUsers, storedSettings, type TierRow } from './queries/programme.ts';
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
 * shared/src/settings-writer.ts), tiers, and the merchant's dashboard users. The session's merchant only. A new
 * user's password is hashed by the gateway's password checker, in turn with sign-ins (one scrypt at a time).
 */
export const programmeRoutes = (passwords: PasswordChecker) => [
  handle(specs.getSettings, async (ctx) => withDefaults(await storedSettings(ctx.sql, ctx.session.merchantId))),
  handle(specs.updateSettings, async (ctx, { body }) => {
    // Each field given replaces the stored one.
    const changes = Object.entries(body).map(([key, value]) => ({
      kind: 'field' as const,
      key: key as SettingKey,
      value,
    }));
    const settings = await updateMerchantSettings(ctx.sql, ctx.session.merchantId, changes);
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
      await insertTier(ctx.sql, ctx.session.merchantId, {
        name: body.name.trim(),
        rate: body.rate,
        threshold: body.threshold,
      }),
    ),
  ),
  handle(specs.listUsers, async (ctx) => ({
    data: (await listUsers(ctx.sql, ctx.session.merchantId)).map((u) => ({
      id: u.id,
      email: u.email,
      created_at: u.created_at.toISOString(),
    })),
  })),
  handle(specs.createUser, async (ctx, { body }) => {
    try {
      const row = await insertUser(ctx.sql, ctx.session.merchantId, {
        email: body.email,
        passwordHash: await passwords.hash(body.password),
      });
      ctx.log.info('dashboard user added', {
        merchant_id: ctx.session.merchantId,
        by: ctx.session.userId,
        user_id: row.id,
      });
      return { id: row.id, email: row.email, created_at: row.created_at.toISOString() };
    } catch (err) {
      if ((err as { code?: string }).code === '23505') {
        const refused = new ApiError('CONFLICT', 'A dashboard user with this e-mail already exists');
        refused.cause = err;
        throw refused;
      }
      throw err;
    }
  }),
];
