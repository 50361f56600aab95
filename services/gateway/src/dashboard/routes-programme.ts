import { Type } from '@sinclair/typebox';
import { ApiError } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import { MerchantSettings, withDefaults } from '@platform/shared/schemas/merchant-settings';
import { route, type DashboardContext } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { CreateTierBody, CreateUserBody, DashboardUser, Tier, TierList, UserList } from './schemas.ts';

/** The settings as the services read them (defaults filled in), and a change of any of them. */
const Settings = Type.Object(MerchantSettings.properties, { additionalProperties: false, $id: 'DashboardSettings' });
// Without the defaults: in a change, a field left out stays as it is (it does not return to its default).
const withoutDefault = <T extends object>(schema: T): T => {
  const { default: _unused, ...rest } = schema as T & { default?: unknown };
  return rest as T;
};
const SettingsPatch = Type.Partial(
  Type.Object(
    Object.fromEntries(
      Object.entries(MerchantSettings.properties).map(([k, v]) => [k, withoutDefault(v)]),
    ) as typeof MerchantSettings.properties,
  ),
  { additionalProperties: false, minProperties: 1, $id: 'DashboardSettingsPatch' },
);

const presentTier = (t: { id: string; name: string; rate: string; threshold: string; created_at: Date }) => ({
  id: t.id,
  name: t.name,
  rate: Number(t.rate),
  threshold: Number(t.threshold),
  created_at: t.created_at.toISOString(),
});

/**
 * Settings: the programme's settings (validated by the same schema the services read them with, as the operator
 * CLI's `merchant settings` does), tiers, and the merchant's dashboard users. The session's merchant only. A new
 * user's password is hashed by the gateway's password checker, in turn with sign-ins (one scrypt at a time).
 */
export const programmeRoutes = (passwords: PasswordChecker) => [
  route({
    operationId: 'getSettings',
    method: 'get',
    path: '/dashboard/api/settings',
    summary: 'The programme settings in effect',
    success: { status: 200, schema: Settings, description: 'the settings' },
    async handler(ctx: DashboardContext) {
      const [row] = await ctx.sql<
        { settings: unknown }[]
      >`select settings from merchants where id = ${ctx.session.merchantId}`;
      return withDefaults(row?.settings);
    },
  }),
  route({
    operationId: 'updateSettings',
    method: 'patch',
    path: '/dashboard/api/settings',
    summary: 'Change programme settings; the fields given replace the stored ones (commission_rules as a whole)',
    body: SettingsPatch,
    success: { status: 200, schema: Settings, description: 'the settings in effect afterwards' },
    async handler(ctx: DashboardContext, { body }) {
      return ctx.sql.begin(async (tx) => {
        const [row] = await tx<
          { settings: Record<string, unknown> }[]
        >`select settings from merchants where id = ${ctx.session.merchantId} for update`;
        const stored: Record<string, unknown> = { ...row!.settings };
        for (const [key, value] of Object.entries(body)) stored[key] = value;
        await tx`update merchants set settings = ${tx.json(stored as never)}, updated_at = date_trunc('milliseconds', now()) where id = ${ctx.session.merchantId}`;
        ctx.log.info('programme settings changed from the dashboard', {
          merchant_id: ctx.session.merchantId,
          user_id: ctx.session.userId,
          fields: Object.keys(body),
        });
        return withDefaults(stored);
      });
    },
  }),
  route({
    operationId: 'listTiers',
    method: 'get',
    path: '/dashboard/api/tiers',
    summary: 'The merchant’s tiers, lowest threshold first',
    success: { status: 200, schema: TierList, description: 'the tiers' },
    async handler(ctx: DashboardContext) {
      const rows = await ctx.sql<{ id: string; name: string; rate: string; threshold: string; created_at: Date }[]>`
        select id, name, rate::text, threshold::text, created_at from tiers
        where merchant_id = ${ctx.session.merchantId} order by threshold, created_at, id limit 200`;
      return { data: rows.map(presentTier) };
    },
  }),
  route({
    operationId: 'createTier',
    method: 'post',
    path: '/dashboard/api/tiers',
    summary: 'Add a tier: affiliates whose attributed revenue reaches the threshold are promoted into it',
    body: CreateTierBody,
    success: { status: 201, schema: Tier, description: 'the tier' },
    async handler(ctx: DashboardContext, { body }) {
      const [row] = await ctx.sql<{ id: string; name: string; rate: string; threshold: string; created_at: Date }[]>`
        insert into tiers (id, merchant_id, name, rate, threshold)
        values (${newId('tier')}, ${ctx.session.merchantId}, ${body.name.trim()}, ${body.rate}, ${body.threshold})
        returning id, name, rate::text, threshold::text, created_at`;
      return presentTier(row!);
    },
  }),
  route({
    operationId: 'listUsers',
    method: 'get',
    path: '/dashboard/api/users',
    summary: 'The merchant’s dashboard users',
    success: { status: 200, schema: UserList, description: 'the users' },
    async handler(ctx: DashboardContext) {
      const rows = await ctx.sql<{ id: string; email: string; created_at: Date }[]>`
        select id, email, created_at from dashboard_users where merchant_id = ${ctx.session.merchantId} order by created_at, id limit 500`;
      return { data: rows.map((u) => ({ id: u.id, email: u.email, created_at: u.created_at.toISOString() })) };
    },
  }),
  route({
    operationId: 'createUser',
    method: 'post',
    path: '/dashboard/api/users',
    summary: 'Add a dashboard user to the merchant (as `npm run admin -- user create` does)',
    body: CreateUserBody,
    success: { status: 201, schema: DashboardUser, description: 'the user' },
    async handler(ctx: DashboardContext, { body }) {
      try {
        const [row] = await ctx.sql<{ id: string; email: string; created_at: Date }[]>`
          insert into dashboard_users (id, merchant_id, email, password_hash)
          values (${newId('usr')}, ${ctx.session.merchantId}, ${body.email}, ${await passwords.hash(body.password)})
          returning id, email, created_at`;
        ctx.log.info('dashboard user added', {
          merchant_id: ctx.session.merchantId,
          by: ctx.session.userId,
          user_id: row!.id,
        });
        return { id: row!.id, email: row!.email, created_at: row!.created_at.toISOString() };
      } catch (err) {
        if ((err as { code?: string }).code === '23505')
          throw new ApiError('CONFLICT', 'A dashboard user with this e-mail already exists', undefined, { cause: err });
        throw err;
      }
    },
  }),
];
