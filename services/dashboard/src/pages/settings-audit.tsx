import { dash, unwrap, type Session } from '../api.ts';
import { useList } from '../hooks.ts';
import { formatTime, PagedTable } from '../ui.tsx';

/** What an entry says, in words, from its action and detail. */
function describe(action: string, detail: Record<string, unknown>): string {
  const d = (k: string) => (typeof detail[k] === 'string' ? detail[k] : '');
  switch (action) {
    case 'user.added':
      return `added ${d('email')} as ${d('role')}`;
    case 'user.role_changed':
      return `changed ${d('email')} from ${d('from')} to ${d('to')}`;
    case 'user.removed':
      return `removed ${d('email')} (${d('role')})`;
    case 'invitation.created':
      return `invited ${d('email')} as ${d('role')}`;
    case 'invitation.resent':
      return `sent the invitation of ${d('email')} again`;
    case 'invitation.revoked':
      return `revoked the invitation of ${d('email')}`;
    case 'invitation.accepted':
      return `accepted the invitation as ${d('role')}`;
    case 'ownership.transferred':
      return `made ${d('email')} the owner, and became admin`;
    case 'settings.updated':
      return `changed the settings: ${Object.keys(detail).join(', ')}`;
    case 'tier.created':
      return `added the tier ${d('name')}`;
    case 'account.password_changed':
      return 'changed their password';
    case 'account.signed_out_everywhere':
      return 'signed out everywhere';
    case 'account.password_reset':
      return 'reset their password by a mailed link';
    default:
      return action;
  }
}

/** Settings → Audit log: team and settings changes, who made them, when and from where. Owners and admins only. */
export function AuditLog(props: { session: Session }) {
  if (!props.session.user.permissions.includes('team')) return null;
  return <AuditTable />;
}

function AuditTable() {
  const entries = useList(async (cursor) =>
    unwrap(await dash.GET('/dashboard/api/audit', { params: { query: cursor ? { cursor } : {} } })),
  );
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit log</h2>
      <PagedTable
        list={entries}
        what="audit entries"
        empty="No team or settings changes yet."
        columns={['When', 'Who', 'What', 'From']}
        label="Audit log"
        row={(e) => (
          <tr key={e.id}>
            <td>{formatTime(e.created_at)}</td>
            <td>{e.actor}</td>
            <td>{describe(e.action, e.detail)}</td>
            <td>
              <code>{e.ip}</code>
            </td>
          </tr>
        )}
      />
    </section>
  );
}
