import { useEffect } from 'preact/hooks';
import { dash, unwrap, type Session } from '../api.ts';
import { useForm } from '../hooks.ts';
import { ErrorText, Field, Link } from '../ui.tsx';

export function SignIn(props: { onSignedIn: (s: Session) => void }) {
  const form = useForm(
    { email: '', password: '' },
    async (v) => unwrap(await dash.POST('/dashboard/api/session', { body: v })),
    props.onSignedIn,
  );
  useEffect(() => {
    document.title = 'Sign in · Dashboard';
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={form.onSubmit}>
        <Field label="E-mail">
          <input type="email" name="email" autoComplete="username" required {...form.bind('email')} />
        </Field>
        <Field label="Password">
          <input type="password" name="password" autoComplete="current-password" required {...form.bind('password')} />
        </Field>
        <ErrorText error={form.error} />
        <button type="submit" class="primary" disabled={form.pending}>
          {form.pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <Link to="/forgot">Forgot password?</Link>
      </p>
      <p>
        New here? <Link to="/signup">Create an account</Link>
      </p>
    </main>
  );
}
