import { useEffect, useState } from 'preact/hooks';
import { dash, errorText, type Session } from '../api.ts';
import { ErrorText, Field } from '../ui.tsx';

export function SignIn(props: { onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Sign in · Dashboard';
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const { data, error: failure } = await dash.POST('/dashboard/api/session', { body: { email, password } });
    setBusy(false);
    if (data) return props.onSignedIn(data);
    setError(errorText(failure));
  };
  return (
    <main id="main" class="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={(e) => void submit(e)}>
        <Field label="E-mail">
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password">
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <ErrorText error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
