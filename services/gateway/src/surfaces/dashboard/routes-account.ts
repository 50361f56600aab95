import { ApiError } from '@platform/shared/errors';
import { confirmPassword } from './confirm-password.ts';
import { handle } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { replacePasswordHash } from './queries/users.ts';
import { audit } from './routes-audit.ts';
import type { SigninLimiter } from '../../http/accounts/signin-limit.ts';
import { dashboardSpecs as specs } from './specs.ts';

/**
 * The signed-in user's own account: a password change (the current one entered again, counted like a sign-in) ends
 * every other session of theirs, and signing out everywhere ends them all. Each is in the audit log.
 */
export const accountRoutes = (limiter: SigninLimiter, passwords: PasswordChecker) => [
  handle(specs.changePassword, async (ctx, { body }) => {
    const was = await confirmPassword(ctx, limiter, passwords, body.current_password);
    const hash = await passwords.hash(body.new_password);
    const user = { merchantId: ctx.session.merchantId, userId: ctx.session.userId };
    await ctx.sql.begin(async (tx) => {
      // Only over the hash just checked: of two changes at once, the second finds it replaced and changes nothing.
      if (!(await replacePasswordHash(tx, { ...user, was, hash })))
        throw new ApiError('CONFLICT', 'The password was changed meanwhile; sign in again with the new one');
      await ctx.sessions.endAllOf(tx, user, ctx.token);
      await audit(ctx, tx, { action: 'account.password_changed', target: ctx.session.userId, detail: {} });
    });
    ctx.log.info('dashboard password changed', { user_id: user.userId, merchant_id: user.merchantId });
  }),
  handle(specs.signOutEverywhere, async (ctx) => {
    const user = { merchantId: ctx.session.merchantId, userId: ctx.session.userId };
    await ctx.sql.begin(async (tx) => {
      await ctx.sessions.endAllOf(tx, user);
      await audit(ctx, tx, { action: 'account.signed_out_everywhere', target: ctx.session.userId, detail: {} });
    });
    ctx.clearCookie();
    ctx.log.info('dashboard user signed out everywhere', { user_id: user.userId, merchant_id: user.merchantId });
  }),
];
