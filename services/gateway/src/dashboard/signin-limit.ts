import type { Sql } from '@platform/shared/db';

/**
 * Failed sign-ins, counted in Postgres so that every gateway replica sees the same counts: per account (the e-mail,
 * whether or not it exists, so that the answer does not tell which do) and per client IP. A subject that reached its
 * limit is refused, even with the right password, until its window (which opened at its first failure) ends.
 */
export const SIGNIN_WINDOW_SECONDS = 900;

export interface SigninLimits {
  perAccount: number;
  perIp: number;
}

export function createSigninLimiter(sql: Sql, limits: SigninLimits) {
  const subjects = (email: string, ip: string) => [
    { subject: `account:${email.toLowerCase()}`, max: limits.perAccount },
    { subject: `ip:${ip}`, max: limits.perIp },
  ];
  return {
    /** Seconds until a refused subject may try again, or 0 when neither has reached its limit. */
    async retryAfter(email: string, ip: string): Promise<number> {
      const checks = subjects(email, ip);
      const rows = await sql<{ subject: string; count: number; remaining: number }[]>`
        select subject, count, ceil(extract(epoch from window_start + make_interval(secs => ${SIGNIN_WINDOW_SECONDS}) - now()))::int as remaining
        from dashboard_signin_failures
        where subject in ${sql(checks.map((c) => c.subject))} and window_start > now() - make_interval(secs => ${SIGNIN_WINDOW_SECONDS})`;
      let wait = 0;
      for (const row of rows) {
        const max = checks.find((c) => c.subject === row.subject)!.max;
        if (row.count >= max) wait = Math.max(wait, row.remaining, 1);
      }
      return wait;
    },
    async recordFailure(email: string, ip: string): Promise<void> {
      for (const { subject } of subjects(email, ip)) {
        await sql`
          insert into dashboard_signin_failures (subject, window_start, count) values (${subject}, now(), 1)
          on conflict (subject) do update set
            count = case when dashboard_signin_failures.window_start > now() - make_interval(secs => ${SIGNIN_WINDOW_SECONDS})
                         then dashboard_signin_failures.count + 1 else 1 end,
            window_start = case when dashboard_signin_failures.window_start > now() - make_interval(secs => ${SIGNIN_WINDOW_SECONDS})
                                then dashboard_signin_failures.window_start else now() end`;
      }
    },
    /** A successful sign-in clears the account's failures (not the IP's: one right password does not vouch for it). */
    async recordSuccess(email: string): Promise<void> {
      await sql`delete from dashboard_signin_failures where subject = ${`account:${email.toLowerCase()}`}`;
    },
  };
}
