import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { useAction, useForm, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, Link, Loaded, Page } from '../ui.tsx';
import { Account } from './settings-account.tsx';
import { AuditLog } from './settings-audit.tsx';
import { AllCoupons, Tiers, Users } from './settings-lists.tsx';
import { ProgrammePageSettings } from './settings-programme-page.tsx';
import { Invitations } from './settings-team.tsx';

type Settings = DashboardSchema['DashboardSettings'];
type Patch = DashboardSchema['DashboardSettingsPatch'];

const percent = (rate: number) => String(Math.round(rate * 1e6) / 1e4);

/** Settings: the programme, commission rules per event type, tiers, coupons and the dashboard's users. */
export function SettingsPage(props: { session: Session }) {
  const settings = useLoad(async () => unwrap(await dash.GET('/dashboard/api/settings')), []);
  const [saved, setSaved] = useState(false);
  const save = async (body: Patch) => {
    setSaved(false);
    return unwrap(await dash.PATCH('/dashboard/api/settings', { body }));
  };
  // The forms are made anew from the saved settings (Programme is keyed by them): "saved" is said here.
  const onSaved = () => {
    setSaved(true);
    settings.reload();
  };
  return (
    <Page
      title="Settings"
      actions={
        <>
          <Link to="/settings/plan">Plan</Link>
          <Link to="/settings/keys">API keys</Link>
        </>
      }
    >
      <Loaded state={settings} what="the settings">
        {(s) => (
          <>
            <Programme key={JSON.stringify(s)} settings={s} save={save} onSaved={onSaved} />
            <Rules settings={s} save={save} onSaved={onSaved} />
          </>
        )}
      </Loaded>
      {saved ? <p role="status">Settings saved.</p> : null}
      <ProgrammePageSettings />
      <Tiers />
      <AllCoupons />
      <Users session={props.session} />
      <Invitations session={props.session} />
      <AuditLog session={props.session} />
      <Account />
    </Page>
  );
}

interface SectionProps {
  settings: Settings;
  save: (p: Patch) => Promise<unknown>;
  onSaved: () => void;
}

function Programme(props: SectionProps) {
  const s = props.settings;
  const form = useForm(
    {
      default_rate: percent(s.default_rate),
      level_rates: s.level_rates.map(percent).join(', '),
      hold_days: String(s.hold_days),
      currency: s.currency,
      attribution_window_days: String(s.attribution_window_days),
      landing_url: s.landing_url ?? '',
      tracking_host: s.tracking_host ?? '',
      fraud_action: s.fraud_action,
      min_payout: s.min_payout,
      payout_day: s.payout_day === null ? '' : String(s.payout_day),
      tax_form_policy: s.tax_form_policy,
    },
    (v) =>
      props.save({
        default_rate: Number(v.default_rate) / 100,
        level_rates: v.level_rates.trim() ? v.level_rates.split(',').map((r) => Number(r.trim()) / 100) : [],
        hold_days: Number(v.hold_days),
        currency: v.currency.trim().toUpperCase(),
        attribution_window_days: Number(v.attribution_window_days),
        landing_url: v.landing_url.trim() || null,
        tracking_host: v.tracking_host.trim() || null,
        fraud_action: v.fraud_action,
        min_payout: v.min_payout.trim(),
        payout_day: v.payout_day.trim() ? Number(v.payout_day) : null,
        tax_form_policy: v.tax_form_policy,
      }),
    props.onSaved,
    { keep: true },
  );
  return (
    <section aria-labelledby="programme-heading">
      <h2 id="programme-heading">Programme</h2>
      <form class="settings-grid" onSubmit={form.onSubmit}>
        <Field label="Default rate (%)" error={form.fieldError('default_rate')}>
          <input type="number" min={0} max={100} step="0.0001" required {...form.bind('default_rate')} />
        </Field>
        <Field
          label="Level rates (%)"
          hint="parent first, up to five, comma-separated: 10, 5"
          error={form.fieldError('level_rates')}
        >
          <input type="text" {...form.bind('level_rates')} />
        </Field>
        <Field label="Hold days" error={form.fieldError('hold_days')}>
          <input type="number" min={0} max={365} required {...form.bind('hold_days')} />
        </Field>
        <Field label="Currency" error={form.fieldError('currency')}>
          <input type="text" pattern="[A-Za-z]{3}" maxLength={3} required {...form.bind('currency')} />
        </Field>
        <Field label="Attribution window (days)" error={form.fieldError('attribution_window_days')}>
          <input type="number" min={1} max={365} required {...form.bind('attribution_window_days')} />
        </Field>
        <Field label="Landing URL" error={form.fieldError('landing_url')}>
          <input type="url" {...form.bind('landing_url')} placeholder="https://shop.example.com/" />
        </Field>
        <Field
          label="Tracking host"
          hint="your own host for referral links, e.g. go.example.com"
          error={form.fieldError('tracking_host')}
        >
          <input type="text" {...form.bind('tracking_host')} />
        </Field>
        <Field label="Fraud action" error={form.fieldError('fraud_action')}>
          <select {...form.bind('fraud_action')}>
            <option value="hold">Hold flagged commissions</option>
            <option value="void">Void flagged commissions</option>
          </select>
        </Field>
        <Field
          label="Minimum payout"
          hint="in each currency; commissions below it wait for the next payout"
          error={form.fieldError('min_payout')}
        >
          <input type="text" inputMode="decimal" pattern="\d{1,12}(\.\d{1,4})?" required {...form.bind('min_payout')} />
        </Field>
        <Field
          label="Payout day"
          hint="1 to 28: payouts are created that day each month (UTC); empty: only by hand"
          error={form.fieldError('payout_day')}
        >
          <input type="number" min={1} max={28} {...form.bind('payout_day')} />
        </Field>
        <Field label="Tax form policy" error={form.fieldError('tax_form_policy')}>
          <select {...form.bind('tax_form_policy')}>
            <option value="us_threshold">Hold at 600 a year without a tax form</option>
            <option value="required">Hold every payout without a tax form</option>
            <option value="none">Never hold</option>
          </select>
        </Field>
        <div>
          <button type="submit" class="primary" disabled={form.pending}>
            Save programme
          </button>
        </div>
      </form>
      <ErrorText error={form.error} />
    </section>
  );
}

function Rules(props: SectionProps) {
  const rules = props.settings.commission_rules;
  const action = useAction();
  const form = useForm(
    { event_type: '', kind: 'flat', value: '' },
    (v) => {
      const rule =
        v.kind === 'flat'
          ? { kind: 'flat' as const, amount: v.value }
          : { kind: 'percentage' as const, rate: Number(v.value) / 100 };
      return props.save({ commission_rules: { ...rules, [v.event_type.trim()]: rule } });
    },
    props.onSaved,
  );
  const remove = async (type: string) => {
    const rest = { ...rules };
    delete rest[type];
    if (await action.run(() => props.save({ commission_rules: rest }))) props.onSaved();
  };
  const entries = Object.entries(rules);
  return (
    <section aria-labelledby="rules-heading">
      <h2 id="rules-heading">Commission rules</h2>
      {entries.length === 0 ? (
        <Empty>No rules: every event type earns the applicable rate of its amount.</Empty>
      ) : (
        <ul class="plain">
          {entries.map(([type, rule]) => (
            <li key={type}>
              <code>{type}</code>:{' '}
              {rule.kind === 'flat' ? `flat ${rule.amount}` : `${percent(rule.rate)}% of the amount`}{' '}
              <button
                type="button"
                class="danger"
                disabled={action.busy}
                onClick={() => void remove(type)}
                aria-label={`Remove the rule for ${type}`}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="Event type">
          <input
            type="text"
            required
            pattern="[a-z][a-z0-9_.]{0,63}"
            {...form.bind('event_type')}
            placeholder="signup"
          />
        </Field>
        <Field label="Kind">
          <select {...form.bind('kind')}>
            <option value="flat">Flat amount</option>
            <option value="percentage">Percentage</option>
          </select>
        </Field>
        <Field
          label={form.values.kind === 'flat' ? 'Amount' : 'Rate (%)'}
          error={form.fieldError(
            `commission_rules.${form.values.event_type.trim()}.${form.values.kind === 'flat' ? 'amount' : 'rate'}`,
          )}
        >
          <input type="text" inputMode="decimal" required {...form.bind('value')} />
        </Field>
        <button type="submit" disabled={form.pending}>
          Add rule
        </button>
      </form>
      <ErrorText error={form.error ?? action.error} />
    </section>
  );
}
