import {
  API_KEY_PLANS,
  createApiKey,
  CUSTOM_RATE_PLANS,
  revokeApiKey,
  updateApiKey,
  type Plan,
} from '@platform/shared/api-keys';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { route, type DashboardContext } from './define.ts';
import { ApiKeyList, ApiKeyView, CreatedKey, CreateKeyBody, KeyAudit, KeyIdParams, UpdateKeyBody } from './schemas.ts';

interface KeyRow {
  id: string;
  prefix: string;
  scopes: string[];
  rate_limit_per_min: number;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const presentKey = (k: KeyRow) => ({
  id: k.id,
  prefix: k.prefix,
  scopes: k.scopes,
  rate_limit_per_min: k.rate_limit_per_min,
  created_at: k.created_at.toISOString(),
  revoked_at: k.revoked_at?.toISOString() ?? null,
  last_used_at: k.last_used_at?.toISOString() ?? null,
});

/** The merchant's key, or NOT_FOUND: another merchant's key id is answered like one that does not exist. */
async function findKey(sql: Sql, merchantId: string, keyId: string): Promise<KeyRow> {
  const [row] = isId('key', keyId)
    ? await sql<KeyRow[]>`
        select id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
        from api_keys where id = ${keyId} and merchant_id = ${merchantId}`
    : [];
  if (!row) throw new ApiError('NOT_FOUND', 'No such key');
  return row;
}

/** Settings › API keys: through the same functions as the operator CLI (shared/src/api-keys.ts), audited by user. */
export const keyRoutes = [
  route({
    operationId: 'listApiKeys',
    method: 'get',
    path: '/dashboard/api/keys',
    summary: 'The merchant’s API keys, newest first (prefix only; values are never shown again)',
    success: { status: 200, schema: ApiKeyList, description: 'the keys' },
    async handler(ctx: DashboardContext) {
      const rows = await ctx.sql<KeyRow[]>`
        select id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
        from api_keys where merchant_id = ${ctx.session.merchantId} order by created_at desc, id desc limit 500`;
      const plan = ctx.session.plan as Plan;
      return {
        data: rows.map(presentKey),
        can_create: API_KEY_PLANS.includes(plan),
        can_set_rate_limit: CUSTOM_RATE_PLANS.includes(plan),
      };
    },
  }),
  route({
    operationId: 'createApiKey',
    method: 'post',
    path: '/dashboard/api/keys',
    summary: 'Create a key (growth and up); the answer holds its value, shown this once',
    body: CreateKeyBody,
    success: { status: 201, schema: CreatedKey, description: 'the key with its value' },
    async handler(ctx: DashboardContext, { body }) {
      const key = await createApiKey(
        ctx.sql,
        ctx.session.merchantId,
        body.scopes,
        body.rate_limit_per_min,
        ctx.session.email,
      );
      ctx.log.info('api key created from the dashboard', { key_id: key.id, user_id: ctx.session.userId });
      return {
        id: key.id,
        key: key.key,
        prefix: key.prefix,
        scopes: key.scopes,
        rate_limit_per_min: key.rate_limit_per_min,
      };
    },
  }),
  route({
    operationId: 'updateApiKey',
    method: 'patch',
    path: '/dashboard/api/keys/{key_id}',
    summary: 'Change a key’s rate limit (scale and up)',
    params: KeyIdParams,
    body: UpdateKeyBody,
    success: { status: 200, schema: ApiKeyView, description: 'the key' },
    async handler(ctx: DashboardContext, { params, body }) {
      await findKey(ctx.sql, ctx.session.merchantId, params.key_id);
      await updateApiKey(
        ctx.sql,
        params.key_id,
        ctx.session.merchantId,
        { rateLimit: body.rate_limit_per_min },
        ctx.session.email,
      );
      return presentKey(await findKey(ctx.sql, ctx.session.merchantId, params.key_id));
    },
  }),
  route({
    operationId: 'revokeApiKey',
    method: 'post',
    path: '/dashboard/api/keys/{key_id}/revoke',
    summary: 'Revoke a key; every gateway refuses it within a second',
    params: KeyIdParams,
    success: { status: 200, schema: ApiKeyView, description: 'the revoked key' },
    async handler(ctx: DashboardContext, { params }) {
      await findKey(ctx.sql, ctx.session.merchantId, params.key_id);
      await revokeApiKey(ctx.sql, params.key_id, ctx.session.merchantId, ctx.session.email);
      ctx.log.info('api key revoked from the dashboard', { key_id: params.key_id, user_id: ctx.session.userId });
      return presentKey(await findKey(ctx.sql, ctx.session.merchantId, params.key_id));
    },
  }),
  route({
    operationId: 'getApiKeyAudit',
    method: 'get',
    path: '/dashboard/api/keys/{key_id}/audit',
    summary: 'A key’s audit log (with the acting user) and its requests per day over the last 30 days',
    params: KeyIdParams,
    success: { status: 200, schema: KeyAudit, description: 'the audit log and daily requests' },
    async handler(ctx: DashboardContext, { params }) {
      const key = await findKey(ctx.sql, ctx.session.merchantId, params.key_id);
      const events = await ctx.sql<
        { action: string; actor: string | null; detail: Record<string, unknown>; at: Date }[]
      >`
        select action, actor, detail, at from api_key_audit
        where key_id = ${key.id} and merchant_id = ${ctx.session.merchantId} order by at desc, id desc limit 200`;
      const usage = await ctx.sql<{ day: string; requests: string }[]>`
        select d::date::text as day, coalesce(u.requests, 0) as requests
        from generate_series((now() at time zone 'utc')::date - 29, (now() at time zone 'utc')::date, interval '1 day') d
        left join api_key_usage_daily u on u.key_id = ${key.id} and u.day = d::date
        order by d`;
      return {
        key: presentKey(key),
        events: events.map((e) => ({ action: e.action, actor: e.actor, detail: e.detail, at: e.at.toISOString() })),
        usage: usage.map((u) => ({ day: u.day, requests: Number(u.requests) })),
      };
    },
  }),
];
