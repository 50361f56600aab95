import { useState } from 'preact/hooks';
import { api, dash, unwrap, type Schemas } from '../api.ts';
import { useAction, useLoad, usePager } from '../hooks.ts';
import { Empty, ErrorText, Field, formatTime, Link, Loaded, Page, Pager, Status } from '../ui.tsx';
import { TaxAndPayout } from './affiliate-tax.tsx';

type Affiliate = Schemas['Affiliate'];

/** The status moves the API allows from each status. */
const MOVES: Record<Affiliate['status'], { to: Affiliate['status']; label: string }[]> = {
  pending: [
    { to: 'approved', label: 'Approve' },
    { to: 'suspended', label: 'Suspend' },
  ],
  approved: [{ to: 'suspended', label: 'Suspend' }],
  suspended: [{ to: 'approved', label: 'Approve' }],
};

/**
 * One affiliate: status moves, custom rate and tier, referral link, tax form and payout details, lineage (parent and
 * children), coupons.
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
  const update = async (body: Schemas['UpdateAffiliate']) => {
    const done = await action.run(async () =>
      unwrap(
        await api.PATCH('/api/v1/affiliates/{affiliate_id}', {
          params: { path: { affiliate_id: props.affiliateId } },
          body,
        }),
      ),
    );
    if (done) affiliate.reload();
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
            <RateAndTier affiliate={a} busy={action.busy} onSave={update} />
            <TaxAndPayout affiliateId={a.id} />
            <Lineage affiliate={a} />
            <Coupons affiliateId={a.id} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function RateAndTier(props: {
  affiliate: Affiliate;
  busy: boolean;
  onSave: (b: Schemas['UpdateAffiliate']) => Promise<void>;
}) {
  const a = props.affiliate;
  const [rate, setRate] = useState(
    a.custom_commission_rate === null ? '' : String(Math.round(a.custom_commission_rate * 1e6) / 1e4),
  );
  const [tier, setTier] = useState(a.tier_id ?? '');
  const tiers = useLoad(async () => unwrap(await dash.GET('/dashboard/api/tiers')), []);
  return (
    <form
      class="inline-form"
      aria-label="Commission rate and tier"
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSave({ custom_commission_rate: rate === '' ? null : Number(rate) / 100, tier_id: tier || null });
      }}
    >
      <Field label="Custom rate (%)" hint="empty: the tier’s or the programme’s rate">
        <input
          type="number"
          min={0}
          max={100}
          step="0.0001"
          value={rate}
          onInput={(e) => setRate(e.currentTarget.value)}
        />
      </Field>
      <Field label="Tier">
        <select value={tier} onChange={(e) => setTier(e.currentTarget.value)}>
          <option value="">No tier</option>
          {(tiers.data?.data ?? []).map((t) => (
            <option key={t.id} value={t.id}>
              {t.name} ({t.rate * 100}%)
            </option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={props.busy}>
        Save rate and tier
      </button>
    </form>
  );
}

function Lineage(props: { affiliate: Affiliate }) {
  const pager = usePager();
  const children = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/affiliates', {
          params: {
            query: { parent_id: props.affiliate.id, limit: 25, ...(pager.cursor ? { cursor: pager.cursor } : {}) },
          },
        }),
      ),
    [props.affiliate.id, pager.cursor],
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
      <Loaded state={children} what="children">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No children.</Empty>
          ) : (
            <>
              <ul class="plain">
                {page.data.map((c) => (
                  <li key={c.id}>
                    <Link to={`/affiliates/${c.id}`}>{c.display_name}</Link> <span class="muted">{c.email}</span>{' '}
                    <Status value={c.status} />
                  </li>
                ))}
              </ul>
              <Pager
                label="Children"
                page={pager.page}
                next={page.next_cursor}
                onNext={pager.next}
                onPrevious={pager.previous}
              />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

function Coupons(props: { affiliateId: string }) {
  const coupons = useLoad(
    async () =>
      unwrap(await api.GET('/api/v1/coupons', { params: { query: { affiliate_id: props.affiliateId, limit: 100 } } })),
    [props.affiliateId],
  );
  const [code, setCode] = useState('');
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const done = await action.run(async () =>
      unwrap(await api.POST('/api/v1/coupons', { body: { code, affiliate_id: props.affiliateId } })),
    );
    if (done) {
      setCode('');
      coupons.reload();
    }
  };
  const remove = async (id: string) => {
    const res = await action.run(async () =>
      unwrap(await api.DELETE('/api/v1/coupons/{coupon_id}', { params: { path: { coupon_id: id } } })),
    );
    if (res !== undefined) coupons.reload();
  };
  return (
    <section aria-labelledby="coupons-heading">
      <h2 id="coupons-heading">Coupons</h2>
      <form class="inline-form" onSubmit={(e) => void create(e)}>
        <Field label="New coupon code">
          <input type="text" required maxLength={64} value={code} onInput={(e) => setCode(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={action.busy}>
          Add coupon
        </button>
      </form>
      <ErrorText error={action.error} />
      <Loaded state={coupons} what="coupons">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No coupons.</Empty>
          ) : (
            <ul class="plain">
              {page.data.map((c) => (
                <li key={c.id}>
                  <code>{c.code}</code>{' '}
                  <button
                    type="button"
                    class="danger"
                    onClick={() => void remove(c.id)}
                    aria-label={`Delete coupon ${c.code}`}
                  >
                    Delete
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
