import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { useAction, useForm, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, formatTime, Loaded } from '../ui.tsx';

type Role = DashboardSchema['DashboardInvitation']['role'];
/** The roles one may invite with: only an owner invites an owner (the gateway decides; the page leaves it out). */
const invitable = (session: Session): Role[] =>
  session.user.role === 'owner' ? ['viewer', 'developer', 'admin', 'owner'] : ['viewer', 'developer', 'admin'];

/**
 * Settings → Team → Invitations: invite an address with a role (a mail with a link for 7 days), and the open
 * invitations, each sent again (a new link; the one before stops working) or revoked. Roles with `team` only.
 */
export function Invitations(props: { session: Session }) {
  if (!props.session.user.permissions.includes('team')) return null;
  return <InvitationList session={props.session} />;
}

function InvitationList(props: { session: Session }) {
  const invitations = useLoad(async () => unwrap(await dash.GET('/dashboard/api/invitations')), []);
  const action = useAction();
  const [said, setSaid] = useState<string>();
  const invite = useForm(
    { email: '', role: 'viewer' },
    async (v) => unwrap(await dash.POST('/dashboard/api/invitations', { body: { ...v, role: v.role as Role } })),
    (inv) => {
      setSaid(`Invitation sent to ${inv.email}.`);
      invitations.reload();
    },
  );
  const act = async (work: () => Promise<string>) => {
    setSaid(undefined);
    const done = await action.run(work);
    if (done !== undefined) {
      setSaid(done);
      invitations.reload();
    }
  };
  const path = (id: string) => ({ params: { path: { invitation_id: id } } });
  const resend = (id: string, email: string) =>
    act(async () => {
      unwrap(await dash.POST('/dashboard/api/invitations/{invitation_id}/resend', path(id)));
      return `Invitation sent to ${email} again; the link sent before no longer works.`;
    });
  const revoke = (id: string, email: string) =>
    act(async () => {
      unwrap(await dash.DELETE('/dashboard/api/invitations/{invitation_id}', path(id)));
      return `The invitation of ${email} is revoked.`;
    });
  return (
    <section aria-labelledby="invitations-heading">
      <h2 id="invitations-heading">Invitations</h2>
      <form class="inline-form" onSubmit={invite.onSubmit}>
        <Field label="Invitee’s e-mail" error={invite.fieldError('email')}>
          <input type="email" required autoComplete="off" {...invite.bind('email')} />
        </Field>
        <Field label="Invitee’s role" error={invite.fieldError('role')}>
          <select {...invite.bind('role')}>
            {invitable(props.session).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" disabled={invite.pending}>
          Send invitation
        </button>
      </form>
      <ErrorText error={invite.error ?? action.error} />
      {said ? <p role="status">{said}</p> : null}
      <Loaded state={invitations} what="invitations">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No open invitations.</Empty>
          ) : (
            <ul class="plain" aria-label="Open invitations">
              {list.data.map((i) => (
                <li key={i.id}>
                  {i.email} <span class="muted">as {i.role},</span>{' '}
                  <span class="muted">{i.expired ? 'expired' : `link valid until ${formatTime(i.expires_at)}`}</span>{' '}
                  <button
                    type="button"
                    disabled={action.busy}
                    onClick={() => void resend(i.id, i.email)}
                    aria-label={`Resend the invitation of ${i.email}`}
                  >
                    Resend
                  </button>{' '}
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={() => void revoke(i.id, i.email)}
                    aria-label={`Revoke the invitation of ${i.email}`}
                  >
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

/**
 * An owner hands the ownership to another member and becomes admin. The page is read again afterwards: the session's
 * role, and so what the pages offer, has changed.
 */
export function TransferOwnership(props: { session: Session; member: { id: string; email: string } }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  if (props.session.user.role !== 'owner' || props.member.id === props.session.user.id) return null;
  const transfer = async () => {
    const done = await action.run(async () =>
      unwrap(
        await dash.POST('/dashboard/api/users/{user_id}/transfer_ownership', {
          params: { path: { user_id: props.member.id } },
        }),
      ),
    );
    if (done) location.reload();
  };
  return confirming ? (
    <span class="confirm" role="group" aria-label={`Make ${props.member.email} the owner?`}>
      <button type="button" class="danger" disabled={action.busy} onClick={() => void transfer()}>
        Confirm: you become admin
      </button>
      <button type="button" onClick={() => setConfirming(false)}>
        Cancel
      </button>
      <ErrorText error={action.error} />
    </span>
  ) : (
    <button type="button" onClick={() => setConfirming(true)} aria-label={`Make ${props.member.email} the owner`}>
      Make owner
    </button>
  );
}
