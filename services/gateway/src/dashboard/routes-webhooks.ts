import { decryptionKeys, type CommonConfig } from '@platform/shared/config';
import { decryptSecretWithAny, secretPlace, UndecryptableSecret } from '@platform/shared/crypto';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { route, type DashboardContext } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { EndpointIdParams, PasswordBody, ReplayCount, ReplayCountQuery, RevealedSecret } from './schemas.ts';
import type { SigninLimiter } from './signin-limit.ts';

/**
 * What the Webhooks page needs beyond the public API: the secret revealed again after the password is entered again
 * (the API shows it on create and rotate only), and the count of a bulk replay before it is confirmed. The replay
 * itself goes through the API.
 */
export function webhookRoutes(
  limiter: SigninLimiter,
  passwords: PasswordChecker,
  config: Pick<CommonConfig, 'APP_ENV' | 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS'> | null,
) {
  return [
    route({
      operationId: 'revealWebhookSecret',
      method: 'post',
      path: '/dashboard/api/webhook_endpoints/{endpoint_id}/reveal_secret',
      summary: 'The endpoint’s signing secret, after the signed-in user’s password',
      params: EndpointIdParams,
      body: PasswordBody,
      success: { status: 200, schema: RevealedSecret, description: 'the secret' },
      async handler(ctx: DashboardContext, { params, body }) {
        const { session } = ctx;
        // Wrong passwords here count like failed sign-ins, reserved before the check in the same way: a left-open
        // session cannot be used to guess the password, however many requests it sends at once.
        const reserved = await limiter.reserve(session.email, ctx.ip);
        if ('retryAfter' in reserved) {
          ctx.setHeader('Retry-After', String(reserved.retryAfter));
          throw new ApiError('RATE_LIMITED', 'Too many wrong passwords; try again later');
        }
        const ok = await limiter.checking(reserved.reservation, async () => {
          const [user] = await ctx.sql<{ password_hash: string }[]>`
            select password_hash from dashboard_users where id = ${session.userId} and merchant_id = ${session.merchantId}`;
          return user ? passwords.verify(body.password, user.password_hash) : false;
        });
        if (!ok) throw new ApiError('FORBIDDEN', 'The password is not right');
        await limiter.release(reserved.reservation, true);
        const [endpoint] = isId('we', params.endpoint_id)
          ? await ctx.sql<{ secret_encrypted: string }[]>`
              select secret_encrypted from webhook_endpoints where id = ${params.endpoint_id} and merchant_id = ${session.merchantId}`
          : [];
        if (!endpoint) throw new ApiError('NOT_FOUND', 'No such webhook endpoint');
        ctx.log.info('webhook secret revealed', { endpoint_id: params.endpoint_id, user_id: session.userId });
        const place = secretPlace('webhook-secret', params.endpoint_id, session.merchantId);
        try {
          return { secret: decryptSecretWithAny(decryptionKeys(config!), endpoint.secret_encrypted, place).plaintext };
        } catch (err) {
          if (!(err instanceof UndecryptableSecret)) throw err;
          // Under a key the platform no longer has, or not this endpoint's: what the merchant can do is rotate it.
          const refused = new ApiError('CONFLICT', 'The signing secret cannot be read; rotate it to get a new one');
          refused.cause = err;
          throw refused;
        }
      },
    }),
    route({
      operationId: 'countWebhookReplay',
      method: 'get',
      path: '/dashboard/api/webhook_endpoints/{endpoint_id}/replay_count',
      summary: 'How many deliveries a bulk replay between since and until would send again',
      params: EndpointIdParams,
      query: ReplayCountQuery,
      success: { status: 200, schema: ReplayCount, description: 'the count' },
      async handler(ctx: DashboardContext, { params, query }) {
        if (Date.parse(query.since) >= Date.parse(query.until)) {
          throw new ApiError('INVALID_INPUT', 'The request is invalid', [
            { path: 'until', message: 'must be later than since' },
          ]);
        }
        const merchantId = ctx.session.merchantId;
        const [endpoint] = isId('we', params.endpoint_id)
          ? await ctx.sql`select 1 from webhook_endpoints where id = ${params.endpoint_id} and merchant_id = ${merchantId}`
          : [];
        if (!endpoint) throw new ApiError('NOT_FOUND', 'No such webhook endpoint');
        // The same rows the dispatcher's replayRange sends again: dead-lettered, created in [since, until).
        const [row] = await ctx.sql<{ count: number }[]>`
          select count(*)::int as count from webhook_deliveries
          where merchant_id = ${merchantId} and endpoint_id = ${params.endpoint_id} and status = 'dead_lettered'
            and created_at >= ${query.since}::timestamptz and created_at < ${query.until}::timestamptz`;
        return { count: row!.count };
      },
    }),
  ];
}
