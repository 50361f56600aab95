import { useEffect } from 'preact/hooks';
import { dash, unwrap, type Session } from '../api.ts';
import { useForm, useLoad } from '../hooks.ts';
import { ErrorText, Link, Loaded, NewPasswordField } from '../ui.tsx';

/**
 * An invitation's link (/dashboard/accept?token=…): what it is for (the merchant, the role, the address) and a
 * password to choose; the answer makes the member and signs them in, whoever was signed in here before. A used,
 * revoked or expired link says so at once, and an address that has an account already is refused in words.
 */
export function AcceptInvitation(props: { onSignedIn: (s: Session) => void }) {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const invitation = useLoad(
    async () => unwrap(await dash.POST('/dashboard/api/invitations/preview', { body: { token } })),
    [],
  );
  const join = useForm(
    { password: '' },
    async ({ password }) => {
      unwrap(await dash.POST('/dashboard/api/invitations/accept', { body: { token, password } }));
      const { session } = unwrap(await dash.GET('/dashboard/api/session'));
      if (!session) throw new Error('You are a member now, but the sign-in did not hold; sign in with your password.');
      return session;
    },
    props.onSignedIn,
  );
  useEffect(() => {
    document.title = 'Accept your invitation · Dashboard';
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Accept your invitation</h1>
      <Loaded state={invitation} what="the invitation">
        {(inv) => (
          <>
            <p>
              Join <strong>{inv.company}</strong> as {inv.role}. Choose a password: you will sign in with it and{' '}
              <strong>{inv.email}</strong>.
            </p>
            <form onSubmit={join.onSubmit}>
              <NewPasswordField label="Password" error={join.fieldError('password')} bind={join.bind('password')} />
              <ErrorText error={join.error} />
              <button type="submit" class="primary" disabled={join.pending}>
                {join.pending ? 'Joining…' : 'Accept invitation'}
              </button>
            </form>
          </>
        )}
      </Loaded>
      <p>
        Already a member? <Link to="/">Sign in</Link>
      </p>
    </main>
  );
}
