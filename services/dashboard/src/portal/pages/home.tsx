import { useLoad } from '../../hooks.ts';
import { Empty, Loaded, Page } from '../../ui.tsx';
import { portal, type Home, type PortalSession } from '../api.ts';
import { Copyable } from '../copy.tsx';
import { money } from '../money.ts';

/** The affiliate's referral link to copy, its coupon codes, and this month's clicks, conversions and earnings. */
export function HomePage(props: { session: PortalSession }) {
  const home = useLoad(() => portal<Home>('GET', '/home'), []);
  return (
    <Page title="Home">
      <p>Welcome, {props.session.affiliate.display_name}.</p>
      <Loaded state={home} what="your links and numbers">
        {(h) => (
          <>
            <section aria-labelledby="link-heading">
              <h2 id="link-heading">Your referral link</h2>
              <Copyable label="referral link" value={h.referral_link} testId="referral-link" />
            </section>
            <section aria-labelledby="coupons-heading">
              <h2 id="coupons-heading">Your coupon codes</h2>
              {h.coupons.length === 0 ? (
                <Empty>No coupon code yet.</Empty>
              ) : (
                <ul class="plain">
                  {h.coupons.map((c) => (
                    <li key={c.code}>
                      <code>{c.code}</code>
                    </li>
                  ))}
                </ul>
              )}
            </section>
            <section aria-labelledby="month-heading">
              <h2 id="month-heading">This month</h2>
              <dl class="figures">
                <div>
                  <dt>Clicks</dt>
                  <dd data-testid="month-clicks">{h.this_month.clicks}</dd>
                </div>
                <div>
                  <dt>Conversions</dt>
                  <dd data-testid="month-conversions">{h.this_month.conversions}</dd>
                </div>
                <div>
                  <dt>Earnings</dt>
                  <dd data-testid="month-earnings">{money(h.this_month.earnings, h.currency)}</dd>
                </div>
              </dl>
            </section>
          </>
        )}
      </Loaded>
    </Page>
  );
}
