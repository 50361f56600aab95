import type { Queryable, Sql } from '@platform/shared/db';
import type { CursorPosition } from '@platform/shared/cursor';
import { newId } from '@platform/shared/ids';

/** What the audit log records: team and settings changes, and a user's own account actions. */
export type AuditAction =
  | 'user.added'
  | 'user.role_changed'
  | 'user.removed'
  | 'invitation.created'
  | 'invitation.resent'
  | 'invitation.revoked'
  | 'invitation.accepted'
  | 'ownership.transferred'
  | 'settings.updated'
  | 'tier.created'
  | 'account.password_changed'
  | 'account.signed_out_everywhere'
  | 'account.password_reset';

export interface AuditEntry {
  action: AuditAction;
  /** The object acted on (a user's, an invitation's or a tier's id); null when the merchant's own settings. */
  target: string | null;
  detail: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  id: string;
  actor_email: string;
  ip: string;
  created_at: Date;
}

/** One entry, in the transaction of the change it records. */
export async function recordAudit(
  tx: Queryable,
  by: { merchantId: string; userId: string; email: string; ip: string },
  entry: AuditEntry,
): Promise<void> {
  await tx`
    insert into dashboard_audit (merchant_id, id, actor_id, actor_email, action, target, detail, ip)
    values (${by.merchantId}, ${newId('aud')}, ${by.userId}, ${by.email}, ${entry.action}, ${entry.target},
      ${tx.json(entry.detail as never)}, ${by.ip})`;
}

/** A page of the merchant's log, newest first, after `after` (keyset on created_at, id). */
export const auditEntries = (sql: Sql, merchantId: string, after: CursorPosition | undefined, limit: number) =>
  sql<AuditRow[]>`
    select id, actor_email, action, target, detail, ip, created_at from dashboard_audit
    where merchant_id = ${merchantId}
      ${after ? sql`and (created_at, id) < (${after.created_at}::timestamptz, ${after.id})` : sql``}
    order by created_at desc, id desc
    limit ${limit}`;
