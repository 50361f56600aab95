import { RangeControls, SeriesSection, useRange } from '../analytics.tsx';
import { EventsSection, TopTables } from '../analytics-tables.tsx';
import { api, dash, unwrap, type Schemas } from '../api.ts';
import { useAction, useForm, useList, useLoad } from '../hooks.ts';
import { ErrorText, Field, formatTime, Link, Loaded, Page, PagedTable, Status } from '../ui.tsx';
import { TaxAndPayout } from './affiliate-tax.tsx';
import { AffiliateCells } from './affiliates.tsx';

type Affiliate = Schemas['Affiliate'];

/** The status moves the API allows from each status. */
const MOVES: Record<Affiliate['status'], { to: Affiliate['status']; label: string }[]> = {
  pending: [
    { to: 'approved', label: 'Approve' },
    { to: 'rejected', label: 'Reject' },
    { to: 'suspended', label: 'Suspend' },
  ],
  approved: [{ to: 'suspended', label: 'Suspend' }],
  rejected: [],
  suspended: [{ to: 'approved', label: 'Approve' }],
};

/**
 * One affiliate: status moves, custom rate and tier, referral link, tax form and payout details, lineage (parent and
 * children), coupons, and its analytics (the series, the top tables and the conversion events).
 */
export function AffiliatePage(props: { affiliateId: string }) {
  const affiliate = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/affiliates/{affiliate_id}', { params: { path: { affiliate_id: props.affiliateId } } }),
      ),
    [props.affiliateId],
  );
  const action = useAction();
  const patch = async (body: Schemas['UpdateAffiliate']) =>
    unwrap(
      await api.PATCH('/api/v1/affiliates/{affiliate_id}', {
        params: { path: { affiliate_id: props.affiliateId } },
        body,
      }),
    );
  const update = async (body: Schemas['UpdateAffiliate']) => {
    if (await action.run(() => patch(body))) affiliate.reload();
  };
  return (
    <Page title="Affiliate" actions={<Link to="/affiliates">All affiliates</Link>}>
      <Loaded state={affiliate} what="the affiliate">
        {(a) => (
          <>
            <h2 class="subject">{a.display_name}</h2>
            <dl class="facts">
              <dt>E-mail</dt>
              <dd>{a.email}</dd>
              <dt>Status</dt>
              <dd>
                <Status value={a.status} />{' '}
                {MOVES[a.status].map((m) => (
                  <button key={m.to} type="button" disabled={action.busy} onClick={() => void update({ status: m.to })}>
                    {m.label}
                  </button>
                ))}
              </dd>
              <dt>Referral link</dt>
              <dd>
                <code data-testid="referral-url">{a.referral_url}</code>{' '}
                <button type="button" onClick={() => void navigator.clipboard?.writeText(a.referral_url)}>
                  Copy link
                </button>
              </dd>
              <dt>Lifetime paid</dt>
              <dd>{a.lifetime_commissions_paid}</dd>
              <dt>Joined</dt>
              <dd>{formatTime(a.created_at)}</dd>
            </dl>
            <ErrorText error={action.error} />
            <RateAndTier affiliate={a} save={patch} onSaved={affiliate.reload} />
            <TaxAndPayout affiliateId={a.id} />
            <Lineage affiliate={a} />
            <Coupons affiliateId={a.id} />
            <AffiliateAnalytics affiliateId={a.id} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function RateAndTier(props: {
  affiliate: Affiliate;
  save: (b: Schemas['UpdateAffiliate']) => Promise<unknown>;
  onSaved: () => void;
}) {
  const a = props.affiliate;
  const tiers = useLoad(async () => unwrap(await dash.GET('/dashboard/api/tiers')), []);
  const form = useForm(
    {
      custom_commission_rate:
        a.custom_commission_rate === null ? '' : String(Math.round(a.custom_commission_rate * 1e6) / 1e4),
      tier_id: a.tier_id ?? '',
    },
    (v) =>
      props.save({
        custom_commission_rate: v.custom_commission_rate === '' ? null : Number(v.custom_commission_rate) / 100,
        tier_id: v.tier_id || null,
      }),
    props.onSaved,
    { keep: true },
  );
  return (
    <form class="inline-form" aria-label="Commission rate and tier" onSubmit={form.onSubmit}>
      <Field
        label="Custom rate (%)"
        hint="empty: the tier’s or the programme’s rate"
        error={form.fieldError('custom_commission_rate')}
      >
        <input type="number" min={0} max={100} step="0.0001" {...form.bind('custom_commission_rate')} />
      </Field>
      <Field label="Tier" error={form.fieldError('tier_id')}>
        <select {...form.bind('tier_id')}>
          <option value="">No tier</option>
          {(tiers.data?.data ?? []).map((t) => (
            <option key={t.id} value={t.id}>
              {t.name} ({t.rate * 100}%)
            </option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={form.pending}>
        Save rate and tier
      </button>
      <ErrorText error={form.error} />
    </form>
  );
}

function Lineage(props: { affiliate: Affiliate }) {
  const children = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/affiliates', {
          params: { query: { parent_id: props.affiliate.id, limit: 25, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [props.affiliate.id],
  );
  return (
    <section aria-labelledby="lineage-heading">
      <h2 id="lineage-heading">Lineage</h2>
      <p>
        Parent:{' '}
        {props.affiliate.parent_id ? (
          <Link to={`/affiliates/${props.affiliate.parent_id}`}>{props.affiliate.parent_id}</Link>
        ) : (
          'none (top level)'
        )}
      </p>
      <h3>Children</h3>
      <PagedTable
        list={children}
        what="children"
        empty="No children."
        columns={['Name', 'E-mail', 'Status']}
        label="Children"
        row={(c) => (
          <tr key={c.id}>
            <AffiliateCells affiliate={c} />
            <td>
              <Status value={c.status} />
            </td>
          </tr>
        )}
      />
    </section>
  );
}

function Coupons(props: { affiliateId: string }) {
  const coupons = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/coupons', {
          params: { query: { affiliate_id: props.affiliateId, limit: 25, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [props.affiliateId],
  );
  const action = useAction();
  const form = useForm(
    { code: '' },
    async (v) => unwrap(await api.POST('/api/v1/coupons', { body: { code: v.code, affiliate_id: props.affiliateId } })),
    coupons.reload,
  );
  const remove = async (id: string) => {
    const res = await action.run(async () =>
      unwrap(await api.DELETE('/api/v1/coupons/{coupon_id}', { params: { path: { coupon_id: id } } })),
    );
    if (res !== undefined) coupons.reload();
  };
  return (
    <section aria-labelledby="coupons-heading">
      <h2 id="coupons-heading">Coupons</h2>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="New coupon code" error={form.fieldError('code')}>
          <input type="text" required maxLength={64} {...form.bind('code')} />
        </Field>
        <button type="submit" disabled={form.pending}>
          Add coupon
        </button>
      </form>
      <ErrorText error={form.error ?? action.error} />
      <PagedTable
        list={coupons}
        what="coupons"
        empty="No coupons."
        columns={['Code', 'Created']}
        actions
        label="Coupons"
        row={(c) => (
          <tr key={c.id}>
            <td>
              <code>{c.code}</code>
            </td>
            <td>{formatTime(c.created_at)}</td>
            <td>
              <button
                type="button"
                class="danger"
                onClick={() => void remove(c.id)}
                aria-label={`Delete coupon ${c.code}`}
              >
                Delete
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

/** The Analytics page's series, top tables (but the affiliates') and events, for this affiliate only. */
function AffiliateAnalytics(props: { affiliateId: string }) {
  const { range, span, set } = useRange();
  const shared = { span, affiliateId: props.affiliateId, fileName: `analytics-${props.affiliateId}` };
  return (
    <section aria-labelledby="analytics-heading">
      <h2 id="analytics-heading">Analytics</h2>
      <RangeControls range={range} set={set} />
      <SeriesSection {...shared} />
      <TopTables {...shared} />
      <EventsSection {...shared} />
    </section>
  );
}
