import { useEffect, useState } from 'preact/hooks';
import { dash, setSessionAuth, type Session } from './api.ts';
import { matchRoute, navigate, usePath } from './router.ts';
import { Link, Loading } from './ui.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { LINK_ROUTES, ROUTES, SIGNED_OUT_ROUTES } from './pages/index.tsx';
import { NotFound } from './pages/not-found.tsx';

const NAV = [
  { to: '/', label: 'Overview' },
  { to: '/analytics', label: 'Analytics' },
  { to: '/affiliates', label: 'Affiliates' },
  { to: '/commissions', label: 'Commissions' },
  { to: '/payouts', label: 'Payouts' },
  { to: '/balance', label: 'Balance' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/settings/keys', label: 'API keys' },
  { to: '/settings', label: 'Settings' },
];

/** The shell: the session (or the sign-in page), one navigation landmark, the page of the current path. */
export function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const signedOut = () => setSession(null);

  useEffect(() => {
    void dash.GET('/dashboard/api/session').then(({ data }) => setSession(data?.session ?? null));
  }, []);
  useEffect(() => {
    if (session) setSessionAuth(session.csrf_token, signedOut);
  }, [session]);

  if (session === undefined) return <Loading what="the dashboard" />;
  const signedIn = (s: Session) => {
    setSessionAuth(s.csrf_token, signedOut);
    setSession(s);
    navigate('/');
  };
  // An e-mailed link's page first, whoever is signed in; then, signed out, a page of theirs or the sign-in page.
  const outside = matchRoute(LINK_ROUTES, path) ?? (session === null ? matchRoute(SIGNED_OUT_ROUTES, path) : undefined);
  if (outside) return <outside.route.page params={outside.params} context={signedIn} />;
  if (session === null) return <SignIn onSignedIn={signedIn} />;
  const signOut = async () => {
    await dash.DELETE('/dashboard/api/session');
    setSession(null);
    navigate('/');
  };
  const found = matchRoute(ROUTES, path);
  const active = (to: string) =>
    to === '/'
      ? path === '/'
      : path === to || (path.startsWith(`${to}/`) && !(to === '/settings' && path.startsWith('/settings/keys')));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">{session.merchant.name}</span>
        <span class="muted plan">{session.merchant.plan} plan</span>
        <span class="who">{session.user.email}</span>
        <button type="button" class="link-button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav aria-label="Main" class="side">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} current={active(n.to)}>
                  {n.label}
                </Link>
              </li>
            ))}
            <li>
              <a href="/docs">API reference</a>
            </li>
          </ul>
        </nav>
        <main id="main">
          {/* Keyed by the path: another record's page starts afresh (its forms hold that record's values). */}
          {found ? <found.route.page key={path} params={found.params} context={session} /> : <NotFound />}
        </main>
      </div>
    </>
  );
}
