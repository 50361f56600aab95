import { useEffect, useState } from 'preact/hooks';
import { dash, unwrap, type Session } from '../api.ts';
import { useForm } from '../hooks.ts';
import { ErrorText, Field, Link, NewPasswordField } from '../ui.tsx';

/**
 * "Forgot password?": the address to send a reset link to. The answer is the same whether or not it has an account,
 * so the page only says that a link went out if it does.
 */
export function ForgotPassword() {
  const [sentTo, setSentTo] = useState<string>();
  const form = useForm(
    { email: '' },
    async (v) => {
      unwrap(await dash.POST('/dashboard/api/password_reset', { body: v }));
      return v.email;
    },
    setSentTo,
  );
  useEffect(() => {
    document.title = 'Reset your password · Dashboard';
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Reset your password</h1>
      {sentTo ? (
        <p role="status">
          If <strong>{sentTo}</strong> has an account, a link to choose a new password is on its way. It works for 30
          minutes.
        </p>
      ) : (
        <form onSubmit={form.onSubmit}>
          <Field label="E-mail" error={form.fieldError('email')}>
            <input type="email" name="email" autoComplete="username" required {...form.bind('email')} />
          </Field>
          <ErrorText error={form.error} />
          <button type="submit" class="primary" disabled={form.pending}>
            Send reset link
          </button>
        </form>
      )}
      <p>
        <Link to="/">Back to sign-in</Link>
      </p>
    </main>
  );
}

/** The mailed link (/dashboard/reset?token=…): a new password, then signed in (every other session has ended). */
export function ResetPassword(props: { onSignedIn: (s: Session) => void }) {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const form = useForm(
    { password: '' },
    async (v) => {
      unwrap(await dash.POST('/dashboard/api/password_reset/confirm', { body: { token, password: v.password } }));
      const { session } = unwrap(await dash.GET('/dashboard/api/session'));
      if (!session) throw new Error('The password is set, but the sign-in did not hold; sign in with it.');
      return session;
    },
    props.onSignedIn,
  );
  useEffect(() => {
    document.title = 'Choose a new password · Dashboard';
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Choose a new password</h1>
      <form onSubmit={form.onSubmit}>
        <NewPasswordField label="New password" error={form.fieldError('password')} bind={form.bind('password')} />
        <ErrorText error={form.error} />
        <button type="submit" class="primary" disabled={form.pending}>
          Set password
        </button>
      </form>
      <p>
        <Link to="/forgot">Send a new link</Link>
      </p>
    </main>
  );
}
