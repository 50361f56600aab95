import { useEffect, useState } from 'preact/hooks';
import { useForm } from '../../hooks.ts';
import { ErrorText, Field } from '../../ui.tsx';
import { portal } from '../api.ts';

/**
 * Passwordless sign-in: an address, and a link mailed to it (single use, 15 minutes). The answer is the same whether
 * or not the address is an affiliate's, so the page says the same too.
 */
export function SignInPage() {
  const [sentTo, setSentTo] = useState<string>();
  const form = useForm(
    { email: '' },
    async (v) => {
      await portal('POST', '/sign-in', { email: v.email.trim() });
      return v.email.trim();
    },
    setSentTo,
  );
  useEffect(() => {
    document.title = `${sentTo ? 'Check your e-mail' : 'Sign in'} · Affiliate portal`;
  }, [sentTo]);
  if (sentTo)
    return (
      <main id="main" class="sign-in">
        <h1>Check your e-mail</h1>
        <p role="status">
          If <strong>{sentTo}</strong> belongs to an approved affiliate, a sign-in link is on its way. It works once,
          for 15 minutes.
        </p>
        <button type="button" class="link-button" onClick={() => setSentTo(undefined)}>
          Use another address
        </button>
      </main>
    );
  return (
    <main id="main" class="sign-in">
      <h1>Sign in</h1>
      <p>Affiliates sign in with a link we e-mail them: no password.</p>
      <form onSubmit={form.onSubmit}>
        <Field label="E-mail" error={form.fieldError('email')}>
          <input type="email" name="email" autoComplete="email" required maxLength={254} {...form.bind('email')} />
        </Field>
        <ErrorText error={form.error} />
        <button type="submit" class="primary" disabled={form.pending}>
          {form.pending ? 'Sending…' : 'Send me a sign-in link'}
        </button>
      </form>
    </main>
  );
}
