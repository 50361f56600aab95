import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Role } from '../../../http/accounts/permissions.ts';

/** A merchant's dashboard users, as the Team list shows them. */
export interface MemberRow {
  id: string;
  email: string;
  role: Role;
  created_at: Date;
}

/** Bounded like every list: a merchant's team is people, far fewer than this. */
const TEAM_MAX = 500;

export const listMembers = (sql: Sql, merchantId: string) => sql<MemberRow[]>`
  select id, email, role, created_at from dashboard_users where merchant_id = ${merchantId}
  order by created_at, id limit ${TEAM_MAX}`;

/** A new dashboard user of the merchant; a taken e-mail is a unique violation (23505). */
export async function insertMember(
  sql: Queryable,
  merchantId: string,
  user: { email: string; passwordHash: string; role: Role },
): Promise<MemberRow> {
  const [row] = await sql<MemberRow[]>`
    insert into dashboard_users (id, merchant_id, email, password_hash, role)
    values (${newId('usr')}, ${merchantId}, ${user.email}, ${user.passwordHash}, ${user.role})
    returning id, email, role, created_at`;
  return row!;
}

/**
 * The member `userId` and the merchant's owner count, with the merchant's owners locked until the transaction ends:
 * two changes that would each leave one owner (two owners demoting each other) run one after the other, and the
 * second sees the first's.
 */
export async function lockMember(
  tx: Queryable,
  merchantId: string,
  userId: string,
): Promise<{ member: MemberRow | undefined; owners: number }> {
  const owners = await tx<{ id: string }[]>`
    select id from dashboard_users where merchant_id = ${merchantId} and role = 'owner' order by id for update`;
  const [member] = await tx<MemberRow[]>`
    select id, email, role, created_at from dashboard_users
    where id = ${userId} and merchant_id = ${merchantId} for update`;
  return { member, owners: owners.length };
}

export async function setMemberRole(tx: Queryable, merchantId: string, userId: string, role: Role): Promise<MemberRow> {
  const [row] = await tx<MemberRow[]>`
    update dashboard_users set role = ${role} where id = ${userId} and merchant_id = ${merchantId}
    returning id, email, role, created_at`;
  return row!;
}

/** Removes the member; their sessions go with them (the foreign key cascades), so they are signed out at once. */
export async function deleteMember(tx: Queryable, merchantId: string, userId: string): Promise<void> {
  await tx`delete from dashboard_users where id = ${userId} and merchant_id = ${merchantId}`;
}

/** The addresses of the merchant's owners (whom billing mails). */
export async function ownerEmails(tx: Queryable, merchantId: string): Promise<string[]> {
  const owners = await tx<{ email: string }[]>`
    select email from dashboard_users where merchant_id = ${merchantId} and role = 'owner'`;
  return owners.map((o) => o.email);
}
