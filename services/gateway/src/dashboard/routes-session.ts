import { Type } from '@sinclair/typebox';
import { ApiError } from '@platform/shared/errors';
import { verifyNothing, verifyPassword } from '@platform/shared/passwords';
import { route, type DashboardContext } from './define.ts';
import { CurrentSession, SessionView, SignInBody } from './schemas.ts';
import type { Session } from './sessions.ts';
import type { createSigninLimiter } from './signin-limit.ts';

type Limiter = ReturnType<typeof createSigninLimiter>;

const presentSession = (s: Session) => ({
  user: { id: s.userId, email: s.email },
  merchant: { id: s.merchantId, name: s.merchantName, plan: s.plan },
  csrf_token: s.csrfToken,
  expires_at: s.expiresAt.toISOString(),
});

/** Sign-in, the current session, sign-out. One message for every failed sign-in: it never says which part was wrong. */
export function sessionRoutes(limiter: Limiter) {
  return [
    route({
      operationId: 'signIn',
      method: 'post',
      path: '/dashboard/api/session',
      summary: 'Sign in with a dashboard user’s e-mail and password; sets the session cookie',
      auth: 'none',
      body: SignInBody,
      success: { status: 201, schema: SessionView, description: 'the new session' },
      async handler(ctx: DashboardContext, { body }) {
        const wait = await limiter.retryAfter(body.email, ctx.ip);
        if (wait > 0) {
          ctx.setHeader('Retry-After', String(wait));
          throw new ApiError('RATE_LIMITED', 'Too many failed sign-ins; try again later');
        }
        const [user] = await ctx.sql<{ id: string; merchant_id: string; password_hash: string }[]>`
          select id, merchant_id, password_hash from dashboard_users where lower(email) = lower(${body.email})`;
        const ok = user ? await verifyPassword(body.password, user.password_hash) : await verifyNothing(body.password);
        if (!user || !ok) {
          await limiter.recordFailure(body.email, ctx.ip);
          ctx.log.info('dashboard sign-in refused', { ip: ctx.ip });
          throw new ApiError('UNAUTHORIZED', 'The e-mail or the password is not right');
        }
        await limiter.recordSuccess(body.email);
        const { token } = await ctx.sessions.create(user.id, user.merchant_id);
        const session = (await ctx.sessions.resolve(token))!;
        ctx.setCookie(token, session.expiresAt);
        ctx.log.info('dashboard sign-in', { user_id: user.id, merchant_id: user.merchant_id });
        return presentSession(session);
      },
    }),
    route({
      operationId: 'getSession',
      method: 'get',
      path: '/dashboard/api/session',
      summary:
        'The signed-in user, the merchant and the CSRF token, or null before sign-in (not a 401: nothing failed)',
      auth: 'optional',
      success: { status: 200, schema: CurrentSession, description: 'the session, or null' },
      handler: (ctx: DashboardContext) => ({ session: ctx.session ? presentSession(ctx.session) : null }),
    }),
    route({
      operationId: 'signOut',
      method: 'delete',
      path: '/dashboard/api/session',
      summary: 'Sign out: the session ends on every gateway replica',
      success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'signed out' },
      async handler(ctx: DashboardContext) {
        await ctx.sessions.end(ctx.token);
        ctx.clearCookie();
        return null;
      },
    }),
  ];
}
