import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema } from '../api.ts';
import { useAction, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, Link, Loaded, Page } from '../ui.tsx';
import { AllCoupons, Tiers, Users } from './settings-lists.tsx';

type Settings = DashboardSchema['DashboardSettings'];
type Patch = DashboardSchema['DashboardSettingsPatch'];

const percent = (rate: number) => String(Math.round(rate * 1e6) / 1e4);

/** Settings: the programme, commission rules per event type, tiers, coupons and the dashboard's users. */
export function SettingsPage() {
  const settings = useLoad(async () => unwrap(await dash.GET('/dashboard/api/settings')), []);
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const save = async (body: Patch) => {
    setSaved(false);
    const done = await action.run(async () => unwrap(await dash.PATCH('/dashboard/api/settings', { body })));
    if (done) {
      setSaved(true);
      settings.reload();
    }
  };
  return (
    <Page title="Settings" actions={<Link to="/settings/keys">API keys</Link>}>
      <Loaded state={settings} what="the settings">
        {(s) => (
          <>
            <Programme key={JSON.stringify(s)} settings={s} busy={action.busy} onSave={save} />
            <Rules settings={s} busy={action.busy} onSave={save} />
          </>
        )}
      </Loaded>
      {saved ? <p role="status">Settings saved.</p> : null}
      <ErrorText error={action.error} />
      <Tiers />
      <AllCoupons />
      <Users />
    </Page>
  );
}

function Programme(props: { settings: Settings; busy: boolean; onSave: (p: Patch) => Promise<void> }) {
  const s = props.settings;
  const [form, setForm] = useState({
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
  });
  const set = (k: keyof typeof form) => (e: Event) =>
    setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const submit = (e: Event) => {
    e.preventDefault();
    void props.onSave({
      default_rate: Number(form.default_rate) / 100,
      level_rates: form.level_rates.trim() ? form.level_rates.split(',').map((r) => Number(r.trim()) / 100) : [],
      hold_days: Number(form.hold_days),
      currency: form.currency.trim().toUpperCase(),
      attribution_window_days: Number(form.attribution_window_days),
      landing_url: form.landing_url.trim() || null,
      tracking_host: form.tracking_host.trim() || null,
      fraud_action: form.fraud_action,
      min_payout: form.min_payout.trim(),
      payout_day: form.payout_day.trim() ? Number(form.payout_day) : null,
      tax_form_policy: form.tax_form_policy,
    });
  };
  return (
    <section aria-labelledby="programme-heading">
      <h2 id="programme-heading">Programme</h2>
      <form class="settings-grid" onSubmit={submit}>
        <Field label="Default rate (%)">
          <input
            type="number"
            min={0}
            max={100}
            step="0.0001"
            required
            value={form.default_rate}
            onInput={set('default_rate')}
          />
        </Field>
        <Field label="Level rates (%)" hint="parent first, up to five, comma-separated: 10, 5">
          <input type="text" value={form.level_rates} onInput={set('level_rates')} />
        </Field>
        <Field label="Hold days">
          <input type="number" min={0} max={365} required value={form.hold_days} onInput={set('hold_days')} />
        </Field>
        <Field label="Currency">
          <input
            type="text"
            pattern="[A-Za-z]{3}"
            maxLength={3}
            required
            value={form.currency}
            onInput={set('currency')}
          />
        </Field>
        <Field label="Attribution window (days)">
          <input
            type="number"
            min={1}
            max={365}
            required
            value={form.attribution_window_days}
            onInput={set('attribution_window_days')}
          />
        </Field>
        <Field label="Landing URL">
          <input
            type="url"
            value={form.landing_url}
            onInput={set('landing_url')}
            placeholder="https://shop.example.com/"
          />
        </Field>
        <Field label="Tracking host" hint="your own host for referral links, e.g. go.example.com">
          <input type="text" value={form.tracking_host} onInput={set('tracking_host')} />
        </Field>
        <Field label="Fraud action">
          <select value={form.fraud_action} onChange={set('fraud_action')}>
            <option value="hold">Hold flagged commissions</option>
            <option value="void">Void flagged commissions</option>
          </select>
        </Field>
        <Field label="Minimum payout" hint="in each currency; commissions below it wait for the next payout">
          <input
            type="text"
            inputMode="decimal"
            pattern="\d{1,12}(\.\d{1,4})?"
            required
            value={form.min_payout}
            onInput={set('min_payout')}
          />
        </Field>
        <Field label="Payout day" hint="1 to 28: payouts are created that day each month (UTC); empty: only by hand">
          <input type="number" min={1} max={28} value={form.payout_day} onInput={set('payout_day')} />
        </Field>
        <Field label="Tax form policy">
          <select value={form.tax_form_policy} onChange={set('tax_form_policy')}>
            <option value="us_threshold">Hold at 600 a year without a tax form</option>
            <option value="required">Hold every payout without a tax form</option>
            <option value="none">Never hold</option>
          </select>
        </Field>
        <div>
          <button type="submit" class="primary" disabled={props.busy}>
            Save programme
          </button>
        </div>
      </form>
    </section>
  );
}

function Rules(props: { settings: Settings; busy: boolean; onSave: (p: Patch) => Promise<void> }) {
  const rules = props.settings.commission_rules;
  const [eventType, setEventType] = useState('');
  const [kind, setKind] = useState<'percentage' | 'flat'>('flat');
  const [value, setValue] = useState('');
  const add = (e: Event) => {
    e.preventDefault();
    const rule = kind === 'flat' ? { kind, amount: value } : { kind, rate: Number(value) / 100 };
    void props.onSave({ commission_rules: { ...rules, [eventType.trim()]: rule } });
  };
  const remove = (type: string) => {
    const rest = { ...rules };
    delete rest[type];
    void props.onSave({ commission_rules: rest });
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
                disabled={props.busy}
                onClick={() => remove(type)}
                aria-label={`Remove the rule for ${type}`}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="inline-form" onSubmit={add}>
        <Field label="Event type">
          <input
            type="text"
            required
            pattern="[a-z][a-z0-9_.]{0,63}"
            value={eventType}
            onInput={(e) => setEventType(e.currentTarget.value)}
            placeholder="signup"
          />
        </Field>
        <Field label="Kind">
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as 'percentage' | 'flat')}>
            <option value="flat">Flat amount</option>
            <option value="percentage">Percentage</option>
          </select>
        </Field>
        <Field label={kind === 'flat' ? 'Amount' : 'Rate (%)'}>
          <input
            type="text"
            inputMode="decimal"
            required
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={props.busy}>
          Add rule
        </button>
      </form>
    </section>
  );
}
