import { ApiError, notFound } from '@platform/shared/errors';
import { handle, type DashboardContext } from './define.ts';
import type { PasswordChecker } from './password-check.ts';
import { audit } from './routes-audit.ts';
import { deleteMember, insertMember, listMembers, lockMember, setMemberRole, type MemberRow } from './queries/team.ts';
import { dashboardSpecs as specs } from './specs.ts';
import { teamChangeRefusal, type TeamChange } from './team-rules.ts';

const presentMember = (m: MemberRow) => ({
  id: m.id,
  email: m.email,
  role: m.role,
  created_at: m.created_at.toISOString(),
});

/**
 * Settings → Team: the merchant's dashboard users and their roles. Each change is the rule of team-rules.ts applied
 * under a lock on the merchant's owners, with its audit entry (who, what, from where) in the same transaction.
 */
export const teamRoutes = (passwords: PasswordChecker) => [
  handle(specs.listUsers, async (ctx) => ({
    data: (await listMembers(ctx.sql, ctx.session.merchantId)).map(presentMember),
  })),
  handle(specs.createUser, async (ctx, { body }) => {
    const role = body.role ?? 'viewer';
    refuseIf(ctx, { kind: 'add', role }, null, 0);
    // Hashed before the insert: the scrypt work is not done inside a transaction.
    const passwordHash = await passwords.hash(body.password);
    try {
      const row = await ctx.sql.begin(async (tx) => {
        const member = await insertMember(tx, ctx.session.merchantId, { email: body.email, passwordHash, role });
        await audit(ctx, tx, { action: 'user.added', target: member.id, detail: { email: member.email, role } });
        return member;
      });
      logChange(ctx, 'dashboard user added', { user_id: row.id, role: row.role });
      return presentMember(row);
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new ApiError('CONFLICT', 'A dashboard user with this e-mail already exists', undefined, { cause: err });
      throw err;
    }
  }),
  handle(specs.updateUser, async (ctx, { params, body }) => {
    const row = await ctx.sql.begin(async (tx) => {
      const { member, owners } = await lockMember(tx, ctx.session.merchantId, params.user_id);
      if (!member) throw notFound('dashboard user');
      refuseIf(ctx, { kind: 'role', to: body.role }, member, owners);
      await audit(ctx, tx, {
        action: 'user.role_changed',
        target: member.id,
        detail: { email: member.email, from: member.role, to: body.role },
      });
      return setMemberRole(tx, ctx.session.merchantId, member.id, body.role);
    });
    logChange(ctx, 'dashboard user role changed', { user_id: row.id, role: row.role });
    return presentMember(row);
  }),
  handle(specs.removeUser, async (ctx, { params }) => {
    const removed = await ctx.sql.begin(async (tx) => {
      const { member, owners } = await lockMember(tx, ctx.session.merchantId, params.user_id);
      if (!member) throw notFound('dashboard user');
      refuseIf(ctx, { kind: 'remove' }, member, owners);
      await deleteMember(tx, ctx.session.merchantId, member.id);
      await audit(ctx, tx, {
        action: 'user.removed',
        target: member.id,
        detail: { email: member.email, role: member.role },
      });
      return member;
    });
    logChange(ctx, 'dashboard user removed', { user_id: removed.id, role: removed.role });
  }),
  handle(specs.transferOwnership, async (ctx, { params }) => {
    const { merchantId, userId } = ctx.session;
    const row = await ctx.sql.begin(async (tx) => {
      // The member first, as every team change does (updateUser, removeUser): an unknown one is 404 for anyone.
      const { member } = await lockMember(tx, merchantId, params.user_id);
      if (!member) throw notFound('dashboard user');
      // Under the owners' lock, the caller's role as it is now (not as the session read it): two hand-overs at once
      // run one after the other, and the second finds its caller no longer an owner.
      const { member: me } = await lockMember(tx, merchantId, userId);
      if (me?.role !== 'owner') throw new ApiError('FORBIDDEN', 'Only an owner may hand over ownership');
      if (member.id === me.id) throw new ApiError('CONFLICT', 'You are the owner already: choose another member');
      await setMemberRole(tx, merchantId, me.id, 'admin');
      await audit(ctx, tx, {
        action: 'ownership.transferred',
        target: member.id,
        detail: { email: member.email, from: member.role },
      });
      return setMemberRole(tx, merchantId, member.id, 'owner');
    });
    logChange(ctx, 'dashboard ownership transferred', { user_id: row.id, role: row.role });
    return presentMember(row);
  }),
];

function refuseIf(ctx: DashboardContext, change: TeamChange, target: MemberRow | null, owners: number): void {
  const refusal = teamChangeRefusal(ctx.session.role, change, target, owners);
  if (refusal) throw new ApiError(refusal.code, refusal.message);
}

/** A team change in the log: who made it, from where, and what it was made to (a member's or an invitation's id). */
export function logChange(ctx: DashboardContext, what: string, subject: Record<string, string>): void {
  ctx.log.info(what, {
    merchant_id: ctx.session.merchantId,
    by: ctx.session.userId,
    ...subject,
    ip: ctx.ip,
    request_id: ctx.requestId,
  });
}
