import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Role } from '../../../http/accounts/permissions.ts';

/** An invitation's link lives 7 days from its last sending. */
export const INVITATION_DAYS = 7;
/** Open invitations a merchant may have at once: a team is people, and each one is a mail sent. */
export const OPEN_INVITATIONS_MAX = 50;

export interface InvitationRow {
  id: string;
  email: string;
  role: Role;
  invited_by_email: string;
  created_at: Date;
  sent_at: Date;
  expires_at: Date;
}

const columns = (sql: Queryable) => sql`id, email, role, invited_by_email, created_at, sent_at, expires_at`;

/** The merchant's open invitations (neither accepted nor revoked; expired ones too, which can be resent), oldest first. */
export const openInvitations = (sql: Sql, merchantId: string) => sql<InvitationRow[]>`
  select ${columns(sql)} from dashboard_invitations
  where merchant_id = ${merchantId} and accepted_at is null and revoked_at is null
  order by created_at, id limit ${OPEN_INVITATIONS_MAX}`;

/**
 * What stands in the way of inviting `email`: a member of this merchant with that address, an open invitation still
 * in its 7 days, or the merchant's open invitations at their maximum. An expired open invitation to the address is
 * ended here (revoked), so that the new one takes its place.
 */
export async function invitationObstacle(
  tx: Queryable,
  merchantId: string,
  email: string,
): Promise<'member' | 'invited' | 'full' | null> {
  const [member] = await tx`
    select 1 from dashboard_users where merchant_id = ${merchantId} and lower(email) = lower(${email})`;
  if (member) return 'member';
  const [open] = await tx<{ live: boolean }[]>`
    select expires_at > now() as live from dashboard_invitations
    where merchant_id = ${merchantId} and lower(email) = lower(${email}) and accepted_at is null and revoked_at is null
    for update`;
  if (open?.live) return 'invited';
  if (open)
    await tx`
      update dashboard_invitations set revoked_at = now()
      where merchant_id = ${merchantId} and lower(email) = lower(${email}) and accepted_at is null and revoked_at is null`;
  const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
    select count(*)::int as count from dashboard_invitations
    where merchant_id = ${merchantId} and accepted_at is null and revoked_at is null`;
  return count >= OPEN_INVITATIONS_MAX ? 'full' : null;
}

/**
 * A new invitation, its token stored by hash. Invitations that ended (accepted, revoked or expired) over a month ago
 * are removed as new ones are made: the audit log keeps their story, the table only the recent ones.
 */
export async function insertInvitation(
  tx: Queryable,
  merchantId: string,
  inv: { email: string; role: Role; tokenHash: Buffer; invitedBy: string },
): Promise<InvitationRow> {
  const [row] = await tx<InvitationRow[]>`
    insert into dashboard_invitations (merchant_id, id, email, role, token_hash, invited_by_email, expires_at)
    values (${merchantId}, ${newId('inv')}, ${inv.email}, ${inv.role}, ${inv.tokenHash}, ${inv.invitedBy},
            now() + make_interval(days => ${INVITATION_DAYS}))
    returning ${columns(tx)}`;
  await tx`delete from dashboard_invitations where expires_at < now() - interval '30 days'`;
  return row!;
}

/** An open invitation of the merchant, locked until the transaction ends (a resend and a revoke run one at a time). */
export async function lockOpenInvitation(
  tx: Queryable,
  merchantId: string,
  id: string,
): Promise<InvitationRow | undefined> {
  const [row] = await tx<InvitationRow[]>`
    select ${columns(tx)} from dashboard_invitations
    where merchant_id = ${merchantId} and id = ${id} and accepted_at is null and revoked_at is null
    for update`;
  return row;
}

/** A new token for the invitation, for 7 more days: the link mailed before no longer matches anything. */
export async function renewInvitation(
  tx: Queryable,
  merchantId: string,
  id: string,
  tokenHash: Buffer,
): Promise<InvitationRow> {
  const [row] = await tx<InvitationRow[]>`
    update dashboard_invitations
    set token_hash = ${tokenHash}, sent_at = now(), expires_at = now() + make_interval(days => ${INVITATION_DAYS})
    where merchant_id = ${merchantId} and id = ${id}
    returning ${columns(tx)}`;
  return row!;
}

export async function revokeInvitation(tx: Queryable, merchantId: string, id: string): Promise<void> {
  await tx`update dashboard_invitations set revoked_at = now() where merchant_id = ${merchantId} and id = ${id}`;
}

export type InvitationState = 'open' | 'accepted' | 'revoked' | 'expired';

/**
 * The invitation of a link, whatever its state, found by its token alone (the merchant is what it tells). Locked
 * when `lock`: two acceptances of one link at once run one after the other, and the second sees the first's.
 */
export async function invitationByToken(q: Queryable, tokenHash: Buffer, lock: boolean) {
  const [row] = await q<(InvitationRow & { merchant_id: string; state: InvitationState })[]>`
    select merchant_id, ${columns(q)}, ${stateOf(q)} as state
    from dashboard_invitations where token_hash = ${tokenHash}
    ${lock ? q`for update` : q``}`;
  return row;
}

const stateOf = (q: Queryable) => q`
  case when accepted_at is not null then 'accepted' when revoked_at is not null then 'revoked'
       when expires_at <= now() then 'expired' else 'open' end`;

/** What the accept page shows of a link's invitation before the password: the address, the role, the merchant. */
export async function invitationPreview(sql: Sql, tokenHash: Buffer) {
  const [row] = await sql<{ email: string; role: Role; company: string; expires_at: Date; state: InvitationState }[]>`
    select i.email, i.role, m.name as company, i.expires_at, ${stateOf(sql)} as state
    from dashboard_invitations i join merchants m on m.id = i.merchant_id
    where i.token_hash = ${tokenHash}`;
  return row;
}

export async function markAccepted(tx: Queryable, merchantId: string, id: string, userId: string): Promise<void> {
  await tx`
    update dashboard_invitations set accepted_at = now(), user_id = ${userId}
    where merchant_id = ${merchantId} and id = ${id}`;
}
