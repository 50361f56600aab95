import { ApiError } from '@platform/shared/errors';
import { handle, type DashboardContext } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { GRANTS } from '../../http/accounts/permissions.ts';
import { replacePasswordHash, userByEmail, type SignInRow } from './queries/users.ts';
import type { Session } from '../../http/accounts/sessions.ts';
import { dashboardSpecs as specs } from './specs.ts';
import type { SigninLimiter } from '../../http/accounts/signin-limit.ts';

const presentSession = (s: Session) => ({
  user: { id: s.userId, email: s.email, role: s.role, permissions: GRANTS[s.role] },
  merchant: { id: s.merchantId, name: s.merchantName, plan: s.plan },
  csrf_token: s.csrfToken,
  expires_at: s.expiresAt.toISOString(),
});

/** Sign-in, the current session, sign-out. One message for every failed sign-in: it never says which part was wrong. */
export function sessionRoutes(limiter: SigninLimiter, passwords: PasswordChecker) {
  return [
    handle(specs.signIn, async (ctx, { body }) => {
      // The attempt is counted before the password is checked, so parallel guesses cannot all be checked.
      const reserved = await limiter.reserve(body.email, ctx.ip);
      if ('retryAfter' in reserved) {
        ctx.setHeader('Retry-After', String(reserved.retryAfter));
        throw new ApiError('RATE_LIMITED', 'Too many failed sign-ins; try again later');
      }
      const { user, ok } = await limiter.checking(reserved.reservation, async () => {
        const user = await userByEmail(ctx.sql, body.email);
        return { user, ok: await passwords.verify(body.password, user?.password_hash ?? null) };
      });
      if (!user || !ok) {
        ctx.log.info('dashboard sign-in refused', { ip: ctx.ip });
        throw new ApiError('UNAUTHORIZED', 'The e-mail or the password is not right');
      }
      await limiter.release(reserved.reservation, true);
      if (passwords.needsRehash(user.password_hash)) await rehash(ctx, passwords, user, body.password);
      const { token } = await ctx.sessions.create(user.id, user.merchant_id);
      const session = (await ctx.sessions.resolve(token))!;
      ctx.setCookie(token, session.expiresAt);
      ctx.log.info('dashboard sign-in', { user_id: user.id, merchant_id: user.merchant_id });
      return presentSession(session);
    }),
    handle(specs.getSession, (ctx) => ({ session: ctx.session ? presentSession(ctx.session) : null })),
    handle(specs.signOut, async (ctx) => {
      await ctx.sessions.end(ctx.token);
      ctx.clearCookie();
      return null;
    }),
  ];
}

/**
 * A hash made with less than today's cost is replaced now, while the password is at hand; only if it is still the
 * one that was checked (another sign-in may have replaced it already). A failure here does not fail the sign-in: the
 * next one tries again.
 */
async function rehash(
  ctx: DashboardContext,
  passwords: PasswordChecker,
  user: SignInRow,
  password: string,
): Promise<void> {
  try {
    const fresh = await passwords.hash(password);
    await replacePasswordHash(ctx.sql, {
      merchantId: user.merchant_id,
      userId: user.id,
      was: user.password_hash,
      hash: fresh,
    });
    ctx.log.info('dashboard password rehashed at today’s cost', { user_id: user.id });
  } catch (err) {
    ctx.log.warn('dashboard password rehash failed; the next sign-in tries again', {
      user_id: user.id,
      err: err as Error,
    });
  }
}
