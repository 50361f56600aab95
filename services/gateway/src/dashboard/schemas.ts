import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '@platform/shared/schemas/common';

/** Payloads of the dashboard's own API (services/gateway/src/dashboard/routes-*.ts), one schema each. */

const Email = Type.String({ minLength: 3, maxLength: 320, description: 'the dashboard user’s e-mail', examples: ['owner@example.com'] });

export const SignInBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 1024, description: 'the user’s password' }) },
  { additionalProperties: false, $id: 'DashboardSignIn' },
);

export const SessionView = Type.Object(
  {
    user: Type.Object({ id: Type.String(), email: Type.String() }, { additionalProperties: false }),
    merchant: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        plan: Type.Union(['free', 'starter', 'growth', 'scale', 'enterprise'].map((p) => Type.Literal(p))),
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
          action: Type.Union(['created', 'revoked', 'scopes_changed', 'rate_limit_changed'].map((a) => Type.Literal(a))),
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
  { password: Type.String({ minLength: 1, maxLength: 1024, description: 'the signed-in user’s password, entered again' }) },
  { additionalProperties: false, $id: 'DashboardPasswordCheck' },
);

export const EndpointIdParams = Type.Object({ endpoint_id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

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
