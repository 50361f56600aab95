import { createApiKey, revokeApiKey, updateApiKey } from '@platform/shared/api-keys';
import { allowsApiKeys, allowsCustomRateLimits } from '@platform/shared/plans';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { handle } from './define.ts';
import { findKey, keyAuditEvents, keyDailyUsage, listKeys, type KeyRow } from './queries/keys.ts';
import { dashboardSpecs as specs } from './specs.ts';

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
async function merchantKey(sql: Sql, merchantId: string, keyId: string): Promise<KeyRow> {
  const row = isId('key', keyId) ? await findKey(sql, merchantId, keyId) : undefined;
  if (!row) throw new ApiError('NOT_FOUND', 'No such key');
  return row;
}

/** Settings › API keys: through the same functions as the operator CLI (shared/src/api-keys.ts), audited by user. */
export const keyRoutes = [
  handle(specs.listApiKeys, async (ctx) => {
    const rows = await listKeys(ctx.sql, ctx.session.merchantId);
    return {
      data: rows.map(presentKey),
      can_create: allowsApiKeys(ctx.session.plan),
      can_set_rate_limit: allowsCustomRateLimits(ctx.session.plan),
    };
  }),
  handle(specs.createApiKey, async (ctx, { body }) => {
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
  }),
  handle(specs.updateApiKey, async (ctx, { params, body }) => {
    await merchantKey(ctx.sql, ctx.session.merchantId, params.key_id);
    await updateApiKey(
      ctx.sql,
      params.key_id,
      ctx.session.merchantId,
      { rateLimit: body.rate_limit_per_min },
      ctx.session.email,
    );
    return presentKey(await merchantKey(ctx.sql, ctx.session.merchantId, params.key_id));
  }),
  handle(specs.revokeApiKey, async (ctx, { params }) => {
    await merchantKey(ctx.sql, ctx.session.merchantId, params.key_id);
    await revokeApiKey(ctx.sql, params.key_id, ctx.session.merchantId, ctx.session.email);
    ctx.log.info('api key revoked from the dashboard', { key_id: params.key_id, user_id: ctx.session.userId });
    return presentKey(await merchantKey(ctx.sql, ctx.session.merchantId, params.key_id));
  }),
  handle(specs.getApiKeyAudit, async (ctx, { params }) => {
    const merchantId = ctx.session.merchantId;
    const key = await merchantKey(ctx.sql, merchantId, params.key_id);
    const [events, usage] = await Promise.all([
      keyAuditEvents(ctx.sql, merchantId, key.id),
      keyDailyUsage(ctx.sql, merchantId, key.id),
    ]);
    return {
      key: presentKey(key),
      events: events.map((e) => ({ action: e.action, actor: e.actor, detail: e.detail, at: e.at.toISOString() })),
      usage: usage.map((u) => ({ day: u.day, requests: Number(u.requests) })),
    };
  }),
];
