import { decryptionKeys, type CommonConfig } from '@platform/shared/config';
import { decryptSecretWithAny, secretPlace, UndecryptableSecret } from '@platform/shared/crypto';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { confirmPassword } from './confirm-password.ts';
import { handle } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { countDeadLettered, endpointExists, endpointSecret } from './queries/webhooks.ts';
import type { SigninLimiter } from '../../http/accounts/signin-limit.ts';
import { dashboardSpecs as specs } from './specs.ts';

/**
 * What the Webhooks page needs beyond the public API: the secret revealed again after the password is entered again
 * (the API shows it on create and rotate only), and the count of a bulk replay before it is confirmed. The replay
 * itself goes through the API.
 */
export function webhookRoutes(
  limiter: SigninLimiter,
  passwords: PasswordChecker,
  config: Pick<CommonConfig, 'APP_ENV' | 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS'>,
) {
  return [
    handle(specs.revealWebhookSecret, async (ctx, { params, body }) => {
      const { session } = ctx;
      await confirmPassword(ctx, limiter, passwords, body.password);
      const secret = isId('we', params.endpoint_id)
        ? await endpointSecret(ctx.sql, session.merchantId, params.endpoint_id)
        : undefined;
      if (!secret) throw new ApiError('NOT_FOUND', 'No such webhook endpoint');
      ctx.log.info('webhook secret revealed', { endpoint_id: params.endpoint_id, user_id: session.userId });
      const place = secretPlace('webhook-secret', params.endpoint_id, session.merchantId);
      try {
        return { secret: decryptSecretWithAny(decryptionKeys(config), secret, place).plaintext };
      } catch (err) {
        if (!(err instanceof UndecryptableSecret)) throw err;
        // Under a key the platform no longer has, or not this endpoint's: what the merchant can do is rotate it.
        const refused = new ApiError('CONFLICT', 'The signing secret cannot be read; rotate it to get a new one');
        refused.cause = err;
        throw refused;
      }
    }),
    handle(specs.countWebhookReplay, async (ctx, { params, query }) => {
      if (Date.parse(query.since) >= Date.parse(query.until)) {
        throw new ApiError('INVALID_INPUT', 'The request is invalid', [
          { path: 'until', message: 'must be later than since' },
        ]);
      }
      const merchantId = ctx.session.merchantId;
      const found = isId('we', params.endpoint_id) && (await endpointExists(ctx.sql, merchantId, params.endpoint_id));
      if (!found) throw new ApiError('NOT_FOUND', 'No such webhook endpoint');
      return { count: await countDeadLettered(ctx.sql, merchantId, params.endpoint_id, query) };
    }),
  ];
}
