import { useEffect, useState } from 'preact/hooks';
import { dash, unwrap, type Session } from '../api.ts';
import { ErrorText, Link } from '../ui.tsx';

/**
 * The verification link of a sign-up (/dashboard/verify?token=…): the token is sent once, and the answer signs the
 * owner in (the session cookie), whether or not another session was open in this browser.
 */
export function Verify(props: { onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string>();
  useEffect(() => {
    document.title = 'Verifying your e-mail · Dashboard';
    const token = new URLSearchParams(location.search).get('token') ?? '';
    void (async () => {
      unwrap(await dash.POST('/dashboard/api/verify', { body: { token } }));
      const { session } = unwrap(await dash.GET('/dashboard/api/session'));
      if (!session) throw new Error('Verified, but the sign-in did not hold; sign in with your password.');
      props.onSignedIn(session);
    })().catch((err: Error) => setError(err.message));
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Verifying your e-mail</h1>
      {error ? (
        <>
          <ErrorText error={error} />
          <p>
            <Link to="/">Sign in</Link> or <Link to="/signup">sign up again</Link> for a new link.
          </p>
        </>
      ) : (
        <p role="status">One moment…</p>
      )}
    </main>
  );
}
