import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '@platform/shared/schemas/common';
import { PERMISSION_NAMES, ROLES } from '../../http/accounts/permissions.ts';
import { PLANS } from '@platform/shared/plans';

/** Payloads of the dashboard's own API (services/gateway/src/surfaces/dashboard/routes-*.ts), one schema each. */

export const RoleSchema = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  { description: 'what the user may do: owner, admin, developer or viewer (docs/DASHBOARD.md)', examples: ['viewer'] },
);

const Email = Type.String({
  minLength: 3,
  maxLength: 320,
  description: 'the dashboard user’s e-mail',
  examples: ['owner@example.com'],
});

export const SignInBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 1024, description: 'the user’s password' }) },
  { additionalProperties: false, $id: 'DashboardSignIn' },
);

export const SessionView = Type.Object(
  {
    user: Type.Object(
      {
        id: Type.String(),
        email: Type.String(),
        role: RoleSchema,
        permissions: Type.Array(Type.Union(PERMISSION_NAMES.map((p) => Type.Literal(p))), {
          description: 'what the role allows: the pages hide what it does not',
        }),
      },
      { additionalProperties: false },
    ),
    merchant: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        plan: Type.Union(PLANS.map((p) => Type.Literal(p))),
      },
      { additionalProperties: false },
    ),
    csrf_token: Type.String({ description: 'send as X-CSRF-Token on every request that changes something' }),
    expires_at: Timestamp('when the session ends'),
  },
  { additionalProperties: false, $id: 'DashboardSession' },
);

export const CurrentSession = Type.Object(
  { session: Type.Union([SessionView, Type.Null()], { description: 'null when the request carries no live session' }) },
  { additionalProperties: false, $id: 'DashboardCurrentSession' },
);

const Scopes = Type.Array(Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('*')]), {
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  description: 'Read-only [read], Read & write [read, write], Full access [*], write-only for ingestion [write]',
});

export const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    prefix: Type.String({ description: 'the first characters of the value, for recognising the key' }),
    scopes: Scopes,
    rate_limit_per_min: Type.Integer(),
    created_at: Timestamp('when the key was created'),
    revoked_at: NullableTimestamp('when the key was revoked'),
    last_used_at: NullableTimestamp('the last request with the key (recorded every few seconds)'),
  },
  { additionalProperties: false, $id: 'DashboardApiKey' },
);

export const ApiKeyList = Type.Object(
  {
    data: Type.Array(ApiKeyView),
    can_create: Type.Boolean({ description: 'the plan allows API keys (growth and up)' }),
    can_set_rate_limit: Type.Boolean({ description: 'the plan allows per-key rate limits (scale and up)' }),
  },
  { additionalProperties: false, $id: 'DashboardApiKeyList' },
);

export const KeyIdParams = Type.Object({ key_id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export const CreateKeyBody = Type.Object(
  { scopes: Scopes, rate_limit_per_min: Type.Optional(Type.Integer({ minimum: 60, maximum: 60000 })) },
  { additionalProperties: false, $id: 'DashboardCreateApiKey' },
);

export const UpdateKeyBody = Type.Object(
  { rate_limit_per_min: Type.Integer({ minimum: 60, maximum: 60000 }) },
  { additionalProperties: false, $id: 'DashboardUpdateApiKey' },
);

export const CreatedKey = Type.Object(
  {
    id: Type.String(),
    key: Type.String({ description: 'the key value: shown this once, never again' }),
    prefix: Type.String(),
    scopes: Scopes,
    rate_limit_per_min: Type.Integer(),
  },
  { additionalProperties: false, $id: 'DashboardCreatedApiKey' },
);

export const KeyAudit = Type.Object(
  {
    key: ApiKeyView,
    events: Type.Array(
      Type.Object(
        {
          action: Type.Union(
            ['created', 'revoked', 'scopes_changed', 'rate_limit_changed'].map((a) => Type.Literal(a)),
          ),
          actor: Type.Union([Type.String(), Type.Null()], { description: 'the dashboard user’s e-mail, or operator' }),
          detail: Type.Record(Type.String(), Type.Unknown()),
          at: Timestamp('when it happened'),
        },
        { additionalProperties: false },
      ),
    ),
    usage: Type.Array(
      Type.Object({ day: Type.String({ format: 'date' }), requests: Type.Integer() }, { additionalProperties: false }),
      { description: 'requests per UTC day, the last 30 days, oldest first' },
    ),
  },
  { additionalProperties: false, $id: 'DashboardApiKeyAudit' },
);

export const PasswordBody = Type.Object(
  {
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'the signed-in user’s password, entered again',
    }),
  },
  { additionalProperties: false, $id: 'DashboardPasswordCheck' },
);

export const EndpointIdParams = Type.Object(
  { endpoint_id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

export const RevealedSecret = Type.Object(
  { secret: Type.String({ description: 'the endpoint’s current signing secret' }) },
  { additionalProperties: false, $id: 'DashboardRevealedSecret' },
);

export const ReplayCountQuery = Type.Object(
  { since: Type.String({ format: 'date-time' }), until: Type.String({ format: 'date-time' }) },
  { additionalProperties: false },
);

export const ReplayCount = Type.Object(
  { count: Type.Integer({ description: 'dead-lettered deliveries of the endpoint created in the range' }) },
  { additionalProperties: false, $id: 'DashboardReplayCount' },
);

const Money = Type.Number({ description: 'in the merchant’s currency' });

export const Overview = Type.Object(
  {
    currency: Type.String({ description: 'the merchant’s currency: the sums below count amounts in it only' }),
    days: Type.Array(Type.String({ format: 'date' }), { description: 'the last 30 UTC days, oldest first' }),
    conversions: Type.Array(Type.Integer(), { description: 'attributed conversions per day' }),
    revenue: Type.Array(Money, { description: 'attributed revenue per day' }),
    commissions: Type.Array(Money, { description: 'commissions created per day, voided ones left out' }),
    top_affiliates: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          display_name: Type.String(),
          email: Type.String(),
          attributed_revenue: Money,
          conversions: Type.Integer(),
        },
        { additionalProperties: false },
      ),
      { description: 'the five affiliates with the most attributed revenue' },
    ),
  },
  { additionalProperties: false, $id: 'DashboardOverview' },
);

export const Tier = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    rate: Type.Number(),
    threshold: Type.Number(),
    created_at: Timestamp('creation time'),
  },
  { additionalProperties: false, $id: 'DashboardTier' },
);
export const TierList = Type.Object(
  { data: Type.Array(Tier) },
  { additionalProperties: false, $id: 'DashboardTierList' },
);
export const CreateTierBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    rate: Type.Number({ minimum: 0, maximum: 1, description: 'commission rate, 0 to 1 (stored to 6 decimals)' }),
    threshold: Type.Number({
      minimum: 0,
      maximum: 1e12,
      description: 'attributed revenue that promotes into the tier',
    }),
  },
  { additionalProperties: false, $id: 'DashboardCreateTier' },
);

export const DashboardUser = Type.Object(
  { id: Type.String(), email: Type.String(), role: RoleSchema, created_at: Timestamp('creation time') },
  { additionalProperties: false, $id: 'DashboardUser' },
);
export const UserList = Type.Object(
  { data: Type.Array(DashboardUser) },
  { additionalProperties: false, $id: 'DashboardUserList' },
);
export const CreateUserBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    password: Type.String({ minLength: 10, maxLength: 1024, description: 'at least 10 characters' }),
    role: Type.Optional({ ...RoleSchema, description: 'the new user’s role; viewer when left out' }),
  },
  { additionalProperties: false, $id: 'DashboardCreateUser' },
);
export const UpdateUserBody = Type.Object(
  { role: RoleSchema },
  { additionalProperties: false, $id: 'DashboardUpdateUser' },
);
export const UserIdParams = Type.Object({ user_id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

export const AuditQuery = Type.Object(
  { cursor: Type.Optional(Type.String({ maxLength: 512, description: 'next_cursor of the page before' })) },
  { additionalProperties: false },
);
export const AuditPage = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          actor: Type.String({ description: 'the e-mail of the user who did it' }),
          action: Type.String({ examples: ['user.role_changed'] }),
          target: Type.Union([Type.String(), Type.Null()], { description: 'the user or tier acted on' }),
          detail: Type.Record(Type.String(), Type.Unknown(), { description: 'what changed' }),
          ip: Type.String({ description: 'the client address it came from' }),
          created_at: Timestamp('when it happened'),
        },
        { additionalProperties: false },
      ),
      { description: 'this page, newest first' },
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
  },
  { additionalProperties: false, $id: 'DashboardAuditPage' },
);

export const ChangePasswordBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024, description: 'the password in use' }),
    new_password: Type.String({ minLength: 10, maxLength: 1024, description: 'at least 10 characters' }),
  },
  { additionalProperties: false, $id: 'DashboardChangePassword' },
);
