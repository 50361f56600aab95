import { ApiError } from '@platform/shared/errors';
import type { DashboardContext } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { passwordHash } from './queries/users.ts';
import type { SigninLimiter } from '../../http/accounts/signin-limit.ts';

/**
 * The signed-in user's password, entered again before something sensitive (a secret revealed, the password
 * changed); answers the hash it matched. Wrong passwords count like failed sign-ins, reserved before the check in
 * the same way, so a session left open cannot be used to guess the password however many requests it sends at once.
 */
export async function confirmPassword(
  ctx: DashboardContext,
  limiter: SigninLimiter,
  passwords: PasswordChecker,
  password: string,
): Promise<string> {
  const { session } = ctx;
  const reserved = await limiter.reserve(session.email, ctx.ip);
  if ('retryAfter' in reserved) {
    ctx.setHeader('Retry-After', String(reserved.retryAfter));
    throw new ApiError('RATE_LIMITED', 'Too many wrong passwords; try again later');
  }
  let matched: string | undefined;
  const ok = await limiter.checking(reserved.reservation, async () => {
    const hash = await passwordHash(ctx.sql, session.merchantId, session.userId);
    if (hash && (await passwords.verify(password, hash))) matched = hash;
    return matched !== undefined;
  });
  if (!ok || matched === undefined) throw new ApiError('FORBIDDEN', 'The password is not right');
  await limiter.release(reserved.reservation, true);
  return matched;
}
