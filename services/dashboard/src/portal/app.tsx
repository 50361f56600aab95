import { useEffect, useState } from 'preact/hooks';
import { matchRoute, navigate, usePath } from '../router.ts';
import { ErrorText, Link, Loading } from '../ui.tsx';
import { portal, setPortalAuth, type PortalSession } from './api.ts';
import { SignInPage } from './pages/sign-in.tsx';
import { PORTAL_NAV, PORTAL_ROUTES, PortalNotFound } from './routes.tsx';

/**
 * The portal's shell: the affiliate's session (or the sign-in page), the header with the programme (a switcher when
 * the address is an approved affiliate of several; for a session a merchant's app opened, a "Back" link to it
 * instead), one navigation landmark and the page of the current path.
 */
export function PortalApp() {
  const path = usePath();
  const [session, setSession] = useState<PortalSession | null | undefined>(undefined);
  const signedOut = () => setSession(null);

  useEffect(() => {
    portal<PortalSession>('GET', '/session').then(setSession, () => setSession(null));
  }, []);
  useEffect(() => {
    if (session) setPortalAuth(session.csrf_token, signedOut);
    // Signed out (or never in): the sign-in page has its own address; signed in, it leads home.
    if (session === null && path !== '/sign-in') navigate('/sign-in', { replace: true });
    if (session && path === '/sign-in') navigate('/', { replace: true });
  }, [session, path]);

  if (session === undefined) return <Loading what="the portal" />;
  if (session === null) return <SignInPage />;
  const signOut = async () => {
    await portal('POST', '/sign-out').catch(() => undefined);
    setSession(null);
  };
  const found = matchRoute(PORTAL_ROUTES, path);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">{session.programme.merchant_name}</span>
        <span class="muted">Affiliate portal</span>
        {session.embedded ? (
          session.return_url ? (
            <a href={session.return_url} target="_top">
              Back
            </a>
          ) : null
        ) : session.programmes.length > 1 ? (
          <Switcher session={session} onSwitched={setSession} />
        ) : null}
        <span class="who">{session.email}</span>
        <button type="button" class="link-button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav aria-label="Main" class="side">
          <ul>
            {PORTAL_NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} current={n.to === path}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">
          {/* Keyed by the path and the affiliate: switching programmes loads every page afresh. */}
          {found ? (
            <found.route.page key={`${session.affiliate.id}${path}`} params={found.params} context={session} />
          ) : (
            <PortalNotFound />
          )}
        </main>
      </div>
    </>
  );
}

/** The programme switcher: the address's other approved affiliates, one per programme. */
function Switcher(props: { session: PortalSession; onSwitched: (s: PortalSession) => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const change = async (affiliateId: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const next = await portal<PortalSession>('POST', '/session/programme', { affiliate_id: affiliateId });
      props.onSwitched(next);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="switcher">
      <label for="programme">Programme</label>
      <select
        id="programme"
        value={props.session.affiliate.id}
        disabled={busy}
        onChange={(e) => void change(e.currentTarget.value)}
      >
        {props.session.programmes.map((p) => (
          <option key={p.affiliate_id} value={p.affiliate_id}>
            {p.merchant_name}
          </option>
        ))}
      </select>
      <ErrorText error={error} />
    </span>
  );
}
