import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema } from '../api.ts';
import { useForm, useLoad } from '../hooks.ts';
import { ErrorText, Field, Loaded } from '../ui.tsx';

type ProgrammePage = DashboardSchema['ProgrammePage'];

/**
 * Settings › Programme page: the public page /p/{slug} where affiliates apply. The commission terms it shows are
 * computed from the rules, tiers and rates above, so they are shown here, not edited.
 */
export function ProgrammePageSettings() {
  const page = useLoad(async () => unwrap(await dash.GET('/dashboard/api/programme')), []);
  // Kept here: the form is made anew from the saved page (keyed by it), so it cannot say "saved" itself.
  const [saved, setSaved] = useState(false);
  return (
    <section aria-labelledby="programme-page-heading">
      <h2 id="programme-page-heading">Programme page</h2>
      <Loaded state={page} what="the programme page">
        {(p) => (
          <PageForm
            key={JSON.stringify(p)}
            page={p}
            onSaving={() => setSaved(false)}
            onSaved={() => {
              setSaved(true);
              page.reload();
            }}
          />
        )}
      </Loaded>
      {saved ? <p role="status">Programme page saved.</p> : null}
    </section>
  );
}

function PageForm(props: { page: ProgrammePage; onSaving: () => void; onSaved: () => void }) {
  const p = props.page;
  const form = useForm(
    {
      slug: p.slug ?? '',
      description: p.description,
      terms_url: p.terms_url ?? '',
      auto_approve: p.auto_approve ? 'on' : 'off',
      frame_origins: p.frame_origins.join('\n'),
    },
    async (v) => {
      props.onSaving();
      return unwrap(
        await dash.PATCH('/dashboard/api/programme', {
          body: {
            slug: v.slug.trim().toLowerCase(),
            description: v.description.trim(),
            terms_url: v.terms_url.trim() || null,
            auto_approve: v.auto_approve === 'on',
            frame_origins: v.frame_origins
              .split(/[\s,]+/)
              .map((o) => o.trim())
              .filter(Boolean),
          },
        }),
      );
    },
    props.onSaved,
    { keep: true },
  );
  return (
    <>
      {p.page_url ? (
        <p>
          Your page: <a href={p.page_url}>{p.page_url}</a>
        </p>
      ) : (
        <p>Choose an address to publish your programme page, where affiliates apply.</p>
      )}
      <form class="settings-grid" onSubmit={form.onSubmit}>
        <Field
          label="Page address"
          hint="lower-case letters, digits and dashes: /p/your-shop"
          error={form.fieldError('slug')}
        >
          <input type="text" required pattern="[a-z0-9][a-z0-9\-]{1,62}" {...form.bind('slug')} />
        </Field>
        <Field label="Description" hint="shown to applicants above the form" error={form.fieldError('description')}>
          <textarea maxLength={4000} rows={4} {...form.bind('description')} />
        </Field>
        <Field label="Terms URL" hint="the programme terms applicants accept" error={form.fieldError('terms_url')}>
          <input type="url" {...form.bind('terms_url')} placeholder="https://shop.example.com/affiliate-terms" />
        </Field>
        <Field label="Applications" error={form.fieldError('auto_approve')}>
          <select {...form.bind('auto_approve')}>
            <option value="off">I approve each application</option>
            <option value="on">Approve every application at once</option>
          </select>
        </Field>
        <Field
          label="Frame origins"
          hint="sites that may embed the affiliate portal, one per line: https://app.example.com"
          error={form.fieldError('frame_origins')}
        >
          <textarea rows={3} {...form.bind('frame_origins')} />
        </Field>
        <div>
          <button type="submit" class="primary" disabled={form.pending}>
            Save page
          </button>
        </div>
      </form>
      <ErrorText error={form.error} />
      <h3>Commission terms shown to applicants</h3>
      <ul>
        {p.commission_terms.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
    </>
  );
}
