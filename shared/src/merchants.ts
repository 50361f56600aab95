import type { Queryable } from './db.ts';
import { newId } from './ids.ts';

/**
 * Making a merchant and its dashboard users: the rows as the operator's CLI (scripts/admin/commands.ts) and the
 * dashboard's sign-up (services/gateway/src/surfaces/dashboard/routes-signup.ts) both write them. Callers check
 * their input in their own terms (usage errors, the API's envelope) first.
 */
export async function insertMerchant(sql: Queryable, name: string, plan: string) {
  const [row] = await sql<{ id: string; name: string; plan: string; settings: unknown; created_at: Date }[]>`
    insert into merchants (id, name, plan) values (${newId('mer')}, ${name}, ${plan})
    returning id, name, plan, settings, created_at`;
  return row!;
}

/**
 * A dashboard user with an already hashed password (shared/src/passwords.ts). `verified: false` (a sign-up) leaves
 * the address to be verified; otherwise the user is taken as verified (migration 043). A duplicate e-mail, in any
 * case, is a unique violation (dashboard_users_email) for the caller to answer.
 */
export async function insertDashboardUser(
  sql: Queryable,
  user: { merchantId: string; email: string; passwordHash: string; verified: boolean },
) {
  const [row] = await sql<{ id: string; merchant_id: string; email: string; created_at: Date }[]>`
    insert into dashboard_users (id, merchant_id, email, password_hash, email_verified_at)
    values (${newId('usr')}, ${user.merchantId}, ${user.email}, ${user.passwordHash},
            ${user.verified ? sql`now()` : null})
    returning id, merchant_id, email, created_at`;
  return row!;
}
