import { encryptionKey } from '@platform/shared/config';
import type { Sql, TransactionSql } from '@platform/shared/db';
import { isUniqueViolation } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { enqueueMail } from '@platform/shared/mail';
import { insertDashboardUser, insertMerchant } from '@platform/shared/merchants';
import type { GatewayConfig } from '../../config.ts';
import { handle } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { insertVerification, registeredUser, useVerification } from './queries/signup.ts';
import { alreadyRegisteredMail, verificationMail } from './signup-mails.ts';
import type { SignupLimiter } from '../../http/accounts/signup-limit.ts';
import { dashboardSpecs as specs } from './specs.ts';
import { hashToken, newToken } from '../../http/accounts/tokens.ts';

/** The plan a merchant that signs up starts on. */
const SIGNUP_PLAN = 'free';

type Outcome = { kind: 'created' | 'reverify' | 'registered'; merchantId: string };

/**
 * Sign-up and e-mail verification. A sign-up makes the merchant (Free plan), its owner with the address not yet
 * verified, a verification link's token (stored hashed) and the mail carrying the link, in one transaction: the mail
 * goes out if and only if the account exists (shared/src/mail.ts). An address already registered gets the same
 * answer, after the same password work, and a mail: a new link if it is still unverified (a lost first mail), else
 * one saying the account exists. Until the owner follows the link the dashboard lets them look but change nothing
 * (router.ts).
 */
export function signupRoutes(limiter: SignupLimiter, passwords: PasswordChecker, config: GatewayConfig) {
  const masterKey = encryptionKey(config);
  const base = config.PUBLIC_BASE_URL;

  const verify = async (tx: TransactionSql, user: { id: string; merchant_id: string }, company: string, to: string) => {
    const token = newToken();
    await insertVerification(tx, {
      tokenHash: hashToken(token),
      userId: user.id,
      merchantId: user.merchant_id,
    });
    const m = verificationMail(base, company, token);
    await enqueueMail(tx, masterKey, { merchantId: user.merchant_id, kind: 'verify_email', to, ...m });
  };

  /**
   * What an address already registered gets, at the address as registered (not as typed this time): a new link while
   * unverified, else a mail that it has an account.
   */
  const registered = async (tx: TransactionSql, email: string): Promise<Outcome | null> => {
    const user = await registeredUser(tx, email);
    if (!user) return null;
    if (user.verified) {
      const m = alreadyRegisteredMail(base);
      await enqueueMail(tx, masterKey, {
        merchantId: user.merchant_id,
        kind: 'already_registered',
        to: user.email,
        ...m,
      });
      return { kind: 'registered', merchantId: user.merchant_id };
    }
    await verify(tx, user, user.company, user.email);
    return { kind: 'reverify', merchantId: user.merchant_id };
  };

  const signUp = async (sql: Sql, input: { company: string; email: string; passwordHash: string }) => {
    try {
      return await sql.begin(async (tx): Promise<Outcome> => {
        const known = await registered(tx, input.email);
        if (known) return known;
        const merchant = await insertMerchant(tx, input.company, SIGNUP_PLAN);
        const user = await insertDashboardUser(tx, {
          merchantId: merchant.id,
          email: input.email,
          passwordHash: input.passwordHash,
          verified: false,
        });
        await verify(tx, user, input.company, input.email);
        return { kind: 'created', merchantId: merchant.id };
      });
    } catch (err) {
      // The same address signed up at the same moment: the other sign-up made the account; this one is a repeat.
      if (!isUniqueViolation(err, 'dashboard_users_email')) throw err;
      return sql.begin(async (tx) => (await registered(tx, input.email))!);
    }
  };

  return [
    handle(specs.signUp, async (ctx, { body }) => {
      const email = body.email.trim();
      const wait = await limiter.reserve(email, ctx.ip);
      if (wait !== null) {
        ctx.setHeader('Retry-After', String(wait));
        throw new ApiError('RATE_LIMITED', 'Too many sign-ups from here; try again later');
      }
      // Hashed whether or not the address is registered: the answer takes the same time either way.
      const passwordHash = await passwords.hash(body.password);
      const outcome = await signUp(ctx.sql, { company: body.company_name.trim(), email, passwordHash });
      ctx.log.info('dashboard sign-up', { outcome: outcome.kind, merchant_id: outcome.merchantId, ip: ctx.ip });
      return { email, status: 'verification_sent' as const };
    }),
    handle(specs.verifyEmail, async (ctx, { body }) => {
      const user = await useVerification(ctx.sql, hashToken(body.token));
      if (!user)
        throw new ApiError(
          'INVALID_INPUT',
          'This verification link is not valid any more: it was used, or is over a day old',
          [{ path: 'token', message: 'is unknown, used or expired' }],
        );
      const { token, expiresAt } = await ctx.sessions.create(user.id, user.merchant_id);
      ctx.setCookie(token, expiresAt);
      ctx.log.info('dashboard e-mail verified; signed in', { user_id: user.id, merchant_id: user.merchant_id });
      return null;
    }),
  ];
}
