import { Type } from '@sinclair/typebox';
import { ErrorEnvelopeSchema } from '@platform/shared/errors';
import { MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import { jsonRouteSpec } from '../../http/openapi/json-spec.ts';
import type { RouteSpec, SurfaceSpec } from '../../http/openapi/spec.ts';
import {
  BalanceAccountLink,
  BalanceFunding,
  BalanceFundingResult,
  BalanceOverview,
  BalanceTransactionPage,
  BalanceTransactionsQuery,
  OpenAccountBody,
  OpenedAccount,
} from './balance-schemas.ts';
import { spec, type DashboardSpec } from './define.ts';
import { passwordResetSpecs } from './password-reset-specs.ts';
import { programmePageSpecs } from './programme-page-specs.ts';
import { signupSpecs } from './signup-specs.ts';
import { billingSpecs } from './billing-specs.ts';
import { invitationSpecs } from './invitations-specs.ts';
import { can, ROLES } from '../../http/accounts/permissions.ts';
import {
  ApiKeyList,
  AuditPage,
  AuditQuery,
  ChangePasswordBody,
  ApiKeyView,
  CreatedKey,
  CreateKeyBody,
  CreateTierBody,
  CreateUserBody,
  CurrentSession,
  DashboardUser,
  EndpointIdParams,
  KeyAudit,
  KeyIdParams,
  Overview,
  PasswordBody,
  ReplayCount,
  ReplayCountQuery,
  RevealedSecret,
  SessionView,
  SignInBody,
  Tier,
  TierList,
  UpdateKeyBody,
  UpdateUserBody,
  UserIdParams,
  UserList,
} from './schemas.ts';

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

/**
 * Every route of the dashboard's own API (/dashboard/api), in the order the router tries them; their handlers are
 * in routes-*.ts. A signed-in session unless `auth` says otherwise.
 */
export const dashboardSpecs = {
  // Sign-in, the current session, sign-out (routes-session.ts).
  signIn: spec({
    operationId: 'signIn',
    permission: null,
    method: 'post',
    path: '/dashboard/api/session',
    summary: 'Sign in with a dashboard user’s e-mail and password; sets the session cookie',
    auth: 'none',
    body: SignInBody,
    success: { status: 201, schema: SessionView, description: 'the new session' },
  }),
  getSession: spec({
    operationId: 'getSession',
    permission: null,
    method: 'get',
    path: '/dashboard/api/session',
    summary: 'The signed-in user, the merchant and the CSRF token, or null before sign-in (not a 401: nothing failed)',
    auth: 'optional',
    success: { status: 200, schema: CurrentSession, description: 'the session, or null' },
  }),
  signOut: spec({
    operationId: 'signOut',
    permission: null,
    method: 'delete',
    path: '/dashboard/api/session',
    summary: 'Sign out: the session ends on every gateway replica',
    success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'signed out' },
  }),
  // Sign-up and e-mail verification (routes-signup.ts).
  ...signupSpecs,
  // Settings › Plan (routes-billing.ts).
  ...billingSpecs,
  // "Forgot password?" (routes-password-reset.ts).
  ...passwordResetSpecs,
  // The Overview (routes-overview.ts).
  // The signed-in user's own account (routes-account.ts).
  changePassword: spec({
    operationId: 'changePassword',
    permission: null,
    method: 'post',
    path: '/dashboard/api/account/password',
    summary: 'Change the signed-in user’s password (the current one entered again); every other session of theirs ends',
    body: ChangePasswordBody,
    success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'changed' },
  }),
  signOutEverywhere: spec({
    operationId: 'signOutEverywhere',
    permission: null,
    method: 'delete',
    path: '/dashboard/api/account/sessions',
    summary: 'End every session of the signed-in user, this one included',
    success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'signed out everywhere' },
  }),
  getOverview: spec({
    operationId: 'getOverview',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/overview',
    summary: 'Conversions, attributed revenue and commissions per day over the last 30 days, and the top affiliates',
    success: { status: 200, schema: Overview, description: 'the figures' },
  }),
  // Settings › API keys (routes-keys.ts).
  listApiKeys: spec({
    operationId: 'listApiKeys',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/keys',
    summary: 'The merchant’s API keys, newest first (prefix only; values are never shown again)',
    success: { status: 200, schema: ApiKeyList, description: 'the keys' },
  }),
  createApiKey: spec({
    operationId: 'createApiKey',
    permission: 'keys',
    method: 'post',
    path: '/dashboard/api/keys',
    summary: 'Create a key (growth and up); the answer holds its value, shown this once',
    body: CreateKeyBody,
    success: { status: 201, schema: CreatedKey, description: 'the key with its value' },
  }),
  updateApiKey: spec({
    operationId: 'updateApiKey',
    permission: 'keys',
    method: 'patch',
    path: '/dashboard/api/keys/{key_id}',
    summary: 'Change a key’s rate limit (scale and up)',
    params: KeyIdParams,
    body: UpdateKeyBody,
    success: { status: 200, schema: ApiKeyView, description: 'the key' },
  }),
  revokeApiKey: spec({
    operationId: 'revokeApiKey',
    permission: 'keys',
    method: 'post',
    path: '/dashboard/api/keys/{key_id}/revoke',
    summary: 'Revoke a key; every gateway refuses it within a second',
    params: KeyIdParams,
    success: { status: 200, schema: ApiKeyView, description: 'the revoked key' },
  }),
  getApiKeyAudit: spec({
    operationId: 'getApiKeyAudit',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/keys/{key_id}/audit',
    summary: 'A key’s audit log (with the acting user) and its requests per day over the last 30 days',
    params: KeyIdParams,
    success: { status: 200, schema: KeyAudit, description: 'the audit log and daily requests' },
  }),
  // The Webhooks page beyond the public API (routes-webhooks.ts).
  revealWebhookSecret: spec({
    operationId: 'revealWebhookSecret',
    permission: 'webhooks',
    method: 'post',
    path: '/dashboard/api/webhook_endpoints/{endpoint_id}/reveal_secret',
    summary: 'The endpoint’s signing secret, after the signed-in user’s password',
    params: EndpointIdParams,
    body: PasswordBody,
    success: { status: 200, schema: RevealedSecret, description: 'the secret' },
  }),
  countWebhookReplay: spec({
    operationId: 'countWebhookReplay',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/webhook_endpoints/{endpoint_id}/replay_count',
    summary: 'How many deliveries a bulk replay between since and until would send again',
    params: EndpointIdParams,
    query: ReplayCountQuery,
    success: { status: 200, schema: ReplayCount, description: 'the count' },
  }),
  // Settings: the programme, tiers (routes-programme.ts).
  getSettings: spec({
    operationId: 'getSettings',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/settings',
    summary: 'The programme settings in effect',
    success: { status: 200, schema: Settings, description: 'the settings' },
  }),
  updateSettings: spec({
    operationId: 'updateSettings',
    permission: 'settings',
    method: 'patch',
    path: '/dashboard/api/settings',
    summary: 'Change programme settings; the fields given replace the stored ones (commission_rules as a whole)',
    body: SettingsPatch,
    success: { status: 200, schema: Settings, description: 'the settings in effect afterwards' },
  }),
  listTiers: spec({
    operationId: 'listTiers',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/tiers',
    summary: 'The merchant’s tiers, lowest threshold first',
    success: { status: 200, schema: TierList, description: 'the tiers' },
  }),
  createTier: spec({
    operationId: 'createTier',
    permission: 'settings',
    method: 'post',
    path: '/dashboard/api/tiers',
    summary: 'Add a tier: affiliates whose attributed revenue reaches the threshold are promoted into it',
    body: CreateTierBody,
    success: { status: 201, schema: Tier, description: 'the tier' },
  }),
  // Settings › Programme page and the applications (routes-programme.ts).
  ...programmePageSpecs,
  // Settings › Team: the merchant's dashboard users and their roles (routes-team.ts).
  listUsers: spec({
    operationId: 'listUsers',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/users',
    summary: 'The merchant’s dashboard users',
    success: { status: 200, schema: UserList, description: 'the users' },
  }),
  createUser: spec({
    operationId: 'createUser',
    permission: 'team',
    method: 'post',
    path: '/dashboard/api/users',
    summary: 'Add a dashboard user to the merchant with a role (viewer unless given)',
    body: CreateUserBody,
    success: { status: 201, schema: DashboardUser, description: 'the user' },
  }),
  updateUser: spec({
    operationId: 'updateUser',
    permission: 'team',
    method: 'patch',
    path: '/dashboard/api/users/{user_id}',
    summary:
      'Change a dashboard user’s role (at once, in their open sessions too); only an owner makes or unmakes an owner',
    params: UserIdParams,
    body: UpdateUserBody,
    success: { status: 200, schema: DashboardUser, description: 'the user' },
  }),
  removeUser: spec({
    operationId: 'removeUser',
    permission: 'team',
    method: 'delete',
    path: '/dashboard/api/users/{user_id}',
    summary: 'Remove a dashboard user: their sessions end at once; the last owner cannot be removed',
    params: UserIdParams,
    success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'removed' },
  }),
  // Invitations and the ownership transfer (routes-invitations.ts, routes-team.ts).
  ...invitationSpecs,
  listAudit: spec({
    operationId: 'listAudit',
    permission: 'team',
    method: 'get',
    path: '/dashboard/api/audit',
    summary: 'The audit log of team and settings changes: who, what, when, from where; newest first, 25 a page',
    query: AuditQuery,
    success: { status: 200, schema: AuditPage, description: 'a page of entries' },
  }),
  // The Balance page (routes-balance.ts).
  getBalance: spec({
    operationId: 'getBalance',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/balance',
    summary: 'The connected account’s onboarding status and balance',
    success: { status: 200, schema: BalanceOverview, description: 'the account (or null) and its balance' },
  }),
  openBalanceAccount: spec({
    operationId: 'openBalanceAccount',
    permission: 'payouts',
    method: 'post',
    path: '/dashboard/api/balance/account',
    summary:
      'Open the merchant’s own connected account (live in production, test mode elsewhere); asked again, answers the same one',
    body: OpenAccountBody,
    success: { status: 201, schema: OpenedAccount, description: 'the account' },
  }),
  createBalanceAccountLink: spec({
    operationId: 'createBalanceAccountLink',
    permission: 'payouts',
    method: 'post',
    path: '/dashboard/api/balance/account_link',
    summary: 'A single-use onboarding link for the connected account, back to the Balance page',
    success: { status: 201, schema: BalanceAccountLink, description: 'the link' },
  }),
  fundBalance: spec({
    operationId: 'fundBalance',
    permission: 'payouts',
    method: 'post',
    path: '/dashboard/api/balance/fund',
    summary: 'Fund a test-mode connected account: a payment intent to it with a test card, confirmed at once',
    body: BalanceFunding,
    success: { status: 201, schema: BalanceFundingResult, description: 'the payment intent as it ended' },
  }),
  listBalanceTransactions: spec({
    operationId: 'listBalanceTransactions',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/balance/transactions',
    summary: 'The connected account’s balance transactions, newest first, 20 a page',
    query: BalanceTransactionsQuery,
    success: { status: 200, schema: BalanceTransactionPage, description: 'a page of transactions' },
  }),
};

/** The spec's document entry, saying which roles its permission lets through. */
const routeSpec = (s: DashboardSpec): RouteSpec =>
  jsonRouteSpec(
    s,
    'session',
    s.permission
      ? `Needs the \`${s.permission}\` permission (roles ${ROLES.filter((r) => can(r, s.permission!)).join(', ')}); a role without it is answered 403 FORBIDDEN.`
      : undefined,
  );

/**
 * The surface of /dashboard/api/openapi. The dashboard's typed client is generated from its document and the
 * public one (services/dashboard/build.ts).
 */
export function dashboardSurface(): SurfaceSpec {
  return {
    info: {
      title: 'Affiliate dashboard API',
      version: '1.0.0',
      description: 'The merchant dashboard’s own routes; signed in by session cookie, with X-CSRF-Token on changes.',
    },
    securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'dash_session' } },
    routes: Object.values(dashboardSpecs).map(routeSpec),
    schemas: { Error: ErrorEnvelopeSchema },
  };
}
