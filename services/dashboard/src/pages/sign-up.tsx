import { useEffect, useState } from 'preact/hooks';
import { dash, unwrap } from '../api.ts';
import { useForm } from '../hooks.ts';
import { ErrorText, Field, Link, NewPasswordField } from '../ui.tsx';

/**
 * Sign-up: a merchant on the Free plan and its owner. The answer is the same whether or not the address already has
 * an account (the mail says which), so the page only ever says where the link went.
 */
export function SignUp() {
  const [sentTo, setSentTo] = useState<string>();
  const form = useForm(
    { company_name: '', email: '', password: '' },
    async (v) => unwrap(await dash.POST('/dashboard/api/signup', { body: v })),
    (answer) => setSentTo(answer.email),
  );
  useEffect(() => {
    document.title = 'Create an account · Dashboard';
  }, []);
  if (sentTo) {
    return (
      <main id="main" class="sign-in">
        <h1>Check your e-mail</h1>
        <p role="status">
          We sent a link to <strong>{sentTo}</strong>. Open it within 24 hours to verify the address and sign in.
        </p>
        <p>
          <Link to="/">Back to sign-in</Link>
        </p>
      </main>
    );
  }
  return (
    <main id="main" class="sign-in">
      <h1>Create an account</h1>
      <form onSubmit={form.onSubmit}>
        <Field label="Company name" error={form.fieldError('company_name')}>
          <input name="company_name" autoComplete="organization" required {...form.bind('company_name')} />
        </Field>
        <Field label="E-mail" error={form.fieldError('email')}>
          <input type="email" name="email" autoComplete="email" required {...form.bind('email')} />
        </Field>
        <NewPasswordField label="Password" error={form.fieldError('password')} bind={form.bind('password')} />
        <ErrorText error={form.error} />
        <button type="submit" class="primary" disabled={form.pending}>
          {form.pending ? 'Creating the account…' : 'Create account'}
        </button>
      </form>
      <p>
        Already have an account? <Link to="/">Sign in</Link>
      </p>
    </main>
  );
}
