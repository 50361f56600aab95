import type { Route } from '../router.ts';
import { Link, Page } from '../ui.tsx';
import type { PortalSession } from './api.ts';
import { CommissionsPage } from './pages/commissions.tsx';
import { HomePage } from './pages/home.tsx';
import { PayoutSettingsPage } from './pages/payout-settings.tsx';
import { PayoutsPage } from './pages/payouts.tsx';
import { PerformancePage } from './pages/performance.tsx';
import { TeamPage } from './pages/team.tsx';

/**
 * The portal's route table: each path inside /portal (the gateway serves portal.html at each) and its page, shown to
 * a signed-in affiliate; /portal/sign-in is the shell's own. Every page reads the session's affiliate only.
 */
export const PORTAL_ROUTES: Route<PortalSession>[] = [
  { path: '/', page: ({ context }) => <HomePage session={context} /> },
  { path: '/performance', page: ({ context }) => <PerformancePage session={context} /> },
  { path: '/commissions', page: () => <CommissionsPage /> },
  { path: '/payouts', page: () => <PayoutsPage /> },
  { path: '/payout-settings', page: () => <PayoutSettingsPage /> },
  { path: '/team', page: () => <TeamPage /> },
];

/** The navigation's entries, in the order of the route table. */
export const PORTAL_NAV = [
  { to: '/', label: 'Home' },
  { to: '/performance', label: 'Performance' },
  { to: '/commissions', label: 'Commissions' },
  { to: '/payouts', label: 'Payouts' },
  { to: '/payout-settings', label: 'Payout settings' },
  { to: '/team', label: 'Team' },
];

export const PortalNotFound = () => (
  <Page title="Not found">
    <p>There is no such page in the portal.</p>
    <Link to="/">Back to Home</Link>
  </Page>
);
