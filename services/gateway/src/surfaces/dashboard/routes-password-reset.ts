import { encryptionKey } from '@platform/shared/config';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { enqueueMail } from '@platform/shared/mail';
import type { GatewayConfig } from '../../config.ts';
import { handle } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { resetMail } from './password-reset-mails.ts';
import { insertReset, setPasswordAfterReset, useReset } from './queries/password-reset.ts';
import { userByEmail } from './queries/users.ts';
import { recordAudit } from './queries/audit.ts';
import { reserveHourly } from '../../http/accounts/signup-limit.ts';
import { dashboardSpecs as specs } from './specs.ts';
import { hashToken, newToken } from '../../http/accounts/tokens.ts';

/**
 * Reset mails allowed per client address and per account in an hour (counted as sign-ups are,
 * http/accounts/signup-limit.ts).
 */
export const RESET_LIMITS = { perIp: 20, perAccount: 5 };

/**
 * "Forgot password?": a mailed link (its token stored hashed, 30 minutes, single use) that sets a new password, ends
 * every session of the user and signs them in. Asking answers the same whether the address has an account or not,
 * and asking is limited per address and per account, since each ask sends a mail.
 */
export function passwordResetRoutes(passwords: PasswordChecker, config: GatewayConfig) {
  const masterKey = encryptionKey(config);
  const base = config.PUBLIC_BASE_URL;

  const mailLink = (sql: Sql, user: { id: string; merchant_id: string }, to: string) =>
    sql.begin(async (tx) => {
      const token = newToken();
      await insertReset(tx, { tokenHash: hashToken(token), userId: user.id, merchantId: user.merchant_id });
      await enqueueMail(tx, masterKey, {
        merchantId: user.merchant_id,
        kind: 'password_reset',
        to,
        ...resetMail(base, token),
      });
    });

  return [
    handle(specs.requestPasswordReset, async (ctx, { body }) => {
      const email = body.email.trim().toLowerCase();
      const wait = await reserveHourly(
        ctx.sql,
        [`reset-ip:${ctx.ip}`, `reset-account:${email}`],
        [RESET_LIMITS.perIp, RESET_LIMITS.perAccount],
      );
      if (wait !== null) {
        ctx.setHeader('Retry-After', String(wait));
        throw new ApiError('RATE_LIMITED', 'Too many reset requests; try again later');
      }
      const user = await userByEmail(ctx.sql, email);
      if (user) await mailLink(ctx.sql, user, user.email);
      ctx.log.info('dashboard password reset asked', { known: user !== undefined, ip: ctx.ip });
      return { status: 'reset_sent' as const };
    }),
    handle(specs.resetPassword, async (ctx, { body }) => {
      // Hashed before the link is used: the scrypt work is not done inside a transaction.
      const hash = await passwords.hash(body.password);
      const user = await ctx.sql.begin(async (tx) => {
        const found = await useReset(tx, hashToken(body.token));
        if (!found) return undefined;
        const who = { merchantId: found.merchant_id, userId: found.id };
        await setPasswordAfterReset(tx, { ...who, hash });
        await ctx.sessions.endAllOf(tx, who);
        await recordAudit(
          tx,
          { ...who, email: found.email, ip: ctx.ip },
          {
            action: 'account.password_reset',
            target: found.id,
            detail: {},
          },
        );
        return found;
      });
      if (!user)
        throw new ApiError(
          'INVALID_INPUT',
          'This reset link is not valid any more: it was used, or is over half an hour old',
          [{ path: 'token', message: 'is unknown, used or expired' }],
        );
      const { token, expiresAt } = await ctx.sessions.create(user.id, user.merchant_id);
      ctx.setCookie(token, expiresAt);
      ctx.log.info('dashboard password reset; signed in', { user_id: user.id, merchant_id: user.merchant_id });
      return null;
    }),
  ];
}
