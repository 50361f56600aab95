import { keysetPage } from '@platform/shared/cursor';
import { handle, type DashboardContext } from './define.ts';
import { auditEntries, recordAudit, type AuditEntry } from './queries/audit.ts';
import type { Queryable } from '@platform/shared/db';
import { dashboardSpecs as specs } from './specs.ts';

const PAGE = 25;

/** Settings → Audit log: the merchant's entries, newest first. */
export const auditRoutes = [
  handle(specs.listAudit, async (ctx, { query }) =>
    keysetPage({
      key: ctx.cursorKey,
      scope: { merchantId: ctx.session.merchantId, list: 'dashboard_audit', filters: {} },
      cursor: query.cursor,
      limit: PAGE,
      fetch: (after, limit) => auditEntries(ctx.sql, ctx.session.merchantId, after, limit),
      present: (e) => ({
        id: e.id,
        actor: e.actor_email,
        action: e.action,
        target: e.target,
        detail: e.detail,
        ip: e.ip,
        created_at: e.created_at.toISOString(),
      }),
    }),
  ),
];

/** Records `entry` as done by the session's user from the request's address, in `tx` (the change's transaction). */
export const audit = (ctx: DashboardContext, tx: Queryable, entry: AuditEntry) =>
  recordAudit(
    tx,
    { merchantId: ctx.session.merchantId, userId: ctx.session.userId, email: ctx.session.email, ip: ctx.ip },
    entry,
  );
