import { encryptionKey } from '@platform/shared/config';
import { isUniqueViolation, type TransactionSql } from '@platform/shared/db';
import { ApiError, notFound } from '@platform/shared/errors';
import { enqueueMail } from '@platform/shared/mail';
import type { GatewayConfig } from '../../config.ts';
import { handle, type DashboardContext } from './define.ts';
import { invitationMail } from './invitations-mails.ts';
import type { PasswordChecker } from './password-check.ts';
import { recordAudit } from './queries/audit.ts';
import {
  insertInvitation,
  invitationByToken,
  invitationObstacle,
  invitationPreview,
  lockOpenInvitation,
  markAccepted,
  openInvitations,
  renewInvitation,
  revokeInvitation,
  type InvitationRow,
  type InvitationState,
} from './queries/invitations.ts';
import { registeredUser } from './queries/signup.ts';
import { insertMember } from './queries/team.ts';
import { audit } from './routes-audit.ts';
import { logChange } from './routes-team.ts';
import { reserveHourly } from '../../http/accounts/signup-limit.ts';
import { dashboardSpecs as specs } from './specs.ts';
import { teamChangeRefusal } from './team-rules.ts';
import { hashToken, newToken } from '../../http/accounts/tokens.ts';

/** Invitation mails (new and resent) a merchant may send in an hour: a free sign-up must not become a mail cannon. */
export const INVITATION_MAILS_PER_HOUR = 30;

const presentInvitation = (i: InvitationRow) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invited_by: i.invited_by_email,
  created_at: i.created_at.toISOString(),
  sent_at: i.sent_at.toISOString(),
  expires_at: i.expires_at.toISOString(),
  expired: i.expires_at.getTime() <= Date.now(),
});

const OBSTACLES = {
  member: 'This address is already a member of the team',
  invited: 'This address has an open invitation already: resend it or revoke it',
  full: 'The team has too many open invitations: revoke some first',
} as const;

/** What a link that cannot be accepted says; its holder has the token, so it may learn why. */
const DEAD_LINK: Record<Exclude<InvitationState, 'open'>, string> = {
  accepted: 'This invitation was accepted already: sign in instead',
  revoked: 'This invitation was revoked; ask the team for a new one',
  expired: 'This invitation is over 7 days old; ask the team to send it again',
};

function deadLink(state: Exclude<InvitationState, 'open'> | undefined): ApiError {
  const message = state ? DEAD_LINK[state] : 'This invitation link is not valid; ask the team for a new one';
  return new ApiError('INVALID_INPUT', message, [{ path: 'token', message: state ?? 'is unknown' }]);
}

/**
 * Settings → Team: invitations by e-mail. An invitation is a row (its link's token stored hashed, 7 days, single
 * use) and its mail, in one transaction: the mail goes out if and only if the invitation exists. Who may invite whom
 * is team-rules.ts' rule for adding a member; each action is audited in its own transaction. Accepting makes the
 * member with the invited role and address (verified: the link came to it) and signs them in.
 */
export function invitationRoutes(passwords: PasswordChecker, config: GatewayConfig) {
  const masterKey = encryptionKey(config);
  const base = config.PUBLIC_BASE_URL;

  const send = async (ctx: DashboardContext, tx: TransactionSql, inv: InvitationRow, token: string) => {
    const m = invitationMail(base, {
      company: ctx.session.merchantName,
      invitedBy: ctx.session.email,
      role: inv.role,
      token,
    });
    await enqueueMail(tx, masterKey, {
      merchantId: ctx.session.merchantId,
      kind: 'team_invitation',
      to: inv.email,
      ...m,
    });
  };

  /** Counts one invitation mail of the merchant; refuses when the hour's are spent. */
  const reserveMail = async (ctx: DashboardContext) => {
    const wait = await reserveHourly(
      ctx.sql,
      [`invite-merchant:${ctx.session.merchantId}`],
      [INVITATION_MAILS_PER_HOUR],
    );
    if (wait === null) return;
    ctx.setHeader('Retry-After', String(wait));
    throw new ApiError('RATE_LIMITED', 'Too many invitations sent in the last hour; try again later');
  };

  /**
   * `change` made to an open invitation of the merchant that the session's role may act on, under the invitation's
   * row lock (a resend and a revoke run one at a time), audited as `action` in the same transaction.
   */
  const actOn = async (
    ctx: DashboardContext,
    id: string,
    action: 'invitation.resent' | 'invitation.revoked',
    change: (tx: TransactionSql, open: InvitationRow) => Promise<InvitationRow>,
  ) => {
    const inv = await ctx.sql.begin(async (tx) => {
      const open = await lockOpenInvitation(tx, ctx.session.merchantId, id);
      if (!open) throw notFound('invitation');
      refuseAdding(ctx, open.role);
      const row = await change(tx, open);
      await audit(ctx, tx, { action, target: row.id, detail: { email: row.email, role: row.role } });
      return row;
    });
    logChange(ctx, `dashboard ${action}`, { invitation_id: inv.id, role: inv.role });
    return inv;
  };

  return [
    handle(specs.listInvitations, async (ctx) => ({
      data: (await openInvitations(ctx.sql, ctx.session.merchantId)).map(presentInvitation),
    })),
    handle(specs.createInvitation, async (ctx, { body }) => {
      const role = body.role ?? 'viewer';
      const email = body.email.trim();
      refuseAdding(ctx, role);
      await reserveMail(ctx);
      const token = newToken();
      try {
        const inv = await ctx.sql.begin(async (tx) => {
          const obstacle = await invitationObstacle(tx, ctx.session.merchantId, email);
          if (obstacle) throw new ApiError('CONFLICT', OBSTACLES[obstacle]);
          const row = await insertInvitation(tx, ctx.session.merchantId, {
            email,
            role,
            tokenHash: hashToken(token),
            invitedBy: ctx.session.email,
          });
          await send(ctx, tx, row, token);
          await audit(ctx, tx, { action: 'invitation.created', target: row.id, detail: { email, role } });
          return row;
        });
        logChange(ctx, 'dashboard invitation.created', { invitation_id: inv.id, role: inv.role });
        return presentInvitation(inv);
      } catch (err) {
        // The same address invited at the same moment by another member: theirs is the open invitation.
        if (isUniqueViolation(err, 'dashboard_invitations_open'))
          throw new ApiError('CONFLICT', OBSTACLES.invited, undefined, { cause: err });
        throw err;
      }
    }),
    handle(specs.resendInvitation, async (ctx, { params }) => {
      await reserveMail(ctx);
      const token = newToken();
      const inv = await actOn(ctx, params.invitation_id, 'invitation.resent', async (tx, open) => {
        const row = await renewInvitation(tx, ctx.session.merchantId, open.id, hashToken(token));
        await send(ctx, tx, row, token);
        return row;
      });
      return presentInvitation(inv);
    }),
    handle(specs.revokeInvitation, async (ctx, { params }) => {
      await actOn(ctx, params.invitation_id, 'invitation.revoked', async (tx, open) => {
        await revokeInvitation(tx, ctx.session.merchantId, open.id);
        return open;
      });
      return null;
    }),
    handle(specs.previewInvitation, async (ctx, { body }) => {
      const inv = await invitationPreview(ctx.sql, hashToken(body.token));
      if (inv?.state !== 'open') throw deadLink(inv?.state);
      return { email: inv.email, role: inv.role, company: inv.company, expires_at: inv.expires_at.toISOString() };
    }),
    handle(specs.acceptInvitation, async (ctx, { body }) => {
      const tokenHash = hashToken(body.token);
      // A dead link is refused before the password work: guessing links costs the guesser, not the gateway.
      const first = await invitationByToken(ctx.sql, tokenHash, false);
      if (first?.state !== 'open') throw deadLink(first?.state);
      const passwordHash = await passwords.hash(body.password);
      const member = await ctx.sql
        .begin(async (tx) => {
          const inv = await invitationByToken(tx, tokenHash, true);
          if (inv?.state !== 'open') throw deadLink(inv?.state);
          if (await registeredUser(tx, inv.email)) throw alreadyRegistered();
          const user = await insertMember(tx, inv.merchant_id, { email: inv.email, passwordHash, role: inv.role });
          await markAccepted(tx, inv.merchant_id, inv.id, user.id);
          await recordAudit(
            tx,
            { merchantId: inv.merchant_id, userId: user.id, email: user.email, ip: ctx.ip },
            { action: 'invitation.accepted', target: inv.id, detail: { email: user.email, role: user.role } },
          );
          return { ...user, merchant_id: inv.merchant_id };
        })
        .catch((err: unknown) => {
          // The address registered at the same moment (a sign-up, another merchant's invitation).
          if (isUniqueViolation(err, 'dashboard_users_email')) throw alreadyRegistered(err);
          throw err;
        });
      const { token, expiresAt } = await ctx.sessions.create(member.id, member.merchant_id);
      ctx.setCookie(token, expiresAt);
      ctx.log.info('dashboard invitation accepted; signed in', {
        user_id: member.id,
        merchant_id: member.merchant_id,
        role: member.role,
        ip: ctx.ip,
      });
      return null;
    }),
  ];
}

const alreadyRegistered = (cause?: unknown) =>
  new ApiError(
    'CONFLICT',
    'This e-mail address already has a dashboard account: sign in with it, or ask to be invited at another address',
    undefined,
    cause === undefined ? undefined : { cause },
  );

/** Inviting is adding a member: only an owner gives the owner role (team-rules.ts). */
function refuseAdding(ctx: DashboardContext, role: InvitationRow['role']): void {
  const refusal = teamChangeRefusal(ctx.session.role, { kind: 'add', role }, null, 0);
  if (refusal) throw new ApiError(refusal.code, refusal.message);
}
