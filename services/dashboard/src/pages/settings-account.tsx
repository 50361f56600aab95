import { useState } from 'preact/hooks';
import { dash, unwrap } from '../api.ts';
import { useAction, useForm } from '../hooks.ts';
import { ErrorText, Field } from '../ui.tsx';

/**
 * Settings → Your account: the password changed (the current one entered again; the user's other sessions end),
 * and every session ended at once, this one included.
 */
export function Account() {
  const [changed, setChanged] = useState(false);
  const form = useForm(
    { current_password: '', new_password: '' },
    async (v) => {
      setChanged(false);
      // 204: no body, so the form is told it succeeded.
      unwrap(await dash.POST('/dashboard/api/account/password', { body: v }));
      return true;
    },
    () => setChanged(true),
  );
  const action = useAction();
  const everywhere = async () => {
    const done = await action.run(async () => {
      unwrap(await dash.DELETE('/dashboard/api/account/sessions'));
      return true;
    });
    // The cookie is gone: the app starts again at the sign-in page.
    if (done) window.location.assign('/dashboard/');
  };
  return (
    <section aria-labelledby="account-heading">
      <h2 id="account-heading">Your account</h2>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="Current password" error={form.fieldError('current_password')}>
          <input type="password" required autoComplete="current-password" {...form.bind('current_password')} />
        </Field>
        <Field label="New password" hint="at least 10 characters" error={form.fieldError('new_password')}>
          <input type="password" required minLength={10} autoComplete="new-password" {...form.bind('new_password')} />
        </Field>
        <button type="submit" disabled={form.pending}>
          Change password
        </button>
      </form>
      <ErrorText error={form.error} />
      {changed ? <p role="status">Password changed. Your other sessions have ended.</p> : null}
      <p>
        <button type="button" class="danger" disabled={action.busy} onClick={() => void everywhere()}>
          Sign out everywhere
        </button>
      </p>
      <ErrorText error={action.error} />
    </section>
  );
}
