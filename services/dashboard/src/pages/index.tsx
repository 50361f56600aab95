import type { Session } from '../api.ts';
import type { Route } from '../router.ts';
import { AffiliatePage } from './affiliate.tsx';
import { AffiliatesPage } from './affiliates.tsx';
import { AcceptInvitation } from './accept.tsx';
import { AnalyticsPage } from './analytics.tsx';
import { BalancePage } from './balance.tsx';
import { CommissionsPage } from './commissions.tsx';
import { KeyPage } from './key.tsx';
import { KeysPage } from './keys.tsx';
import { OverviewPage } from './overview.tsx';
import { PlanPage } from './settings-plan.tsx';
import { ForgotPassword, ResetPassword } from './password-reset.tsx';
import { PayoutsPage } from './payouts.tsx';
import { SettingsPage } from './settings.tsx';
import { SignUp } from './sign-up.tsx';
import { Verify } from './verify.tsx';
import { WebhookPage } from './webhook.tsx';
import { WebhooksPage } from './webhooks.tsx';

/**
 * The route table: each path inside /dashboard and its page, the first pattern that fits winning (ids in the path are
 * checked by the API: another merchant's are not found). A path no pattern fits shows the not-found page.
 */
export const ROUTES: Route<Session>[] = [
  { path: '/', page: ({ context }) => <OverviewPage session={context} /> },
  { path: '/analytics', page: () => <AnalyticsPage /> },
  { path: '/affiliates', page: () => <AffiliatesPage /> },
  { path: '/affiliates/:id', page: ({ params }) => <AffiliatePage affiliateId={params['id']!} /> },
  { path: '/commissions', page: () => <CommissionsPage /> },
  { path: '/payouts', page: () => <PayoutsPage /> },
  { path: '/balance', page: ({ context }) => <BalancePage session={context} /> },
  { path: '/webhooks', page: () => <WebhooksPage /> },
  { path: '/webhooks/:id', page: ({ params }) => <WebhookPage endpointId={params['id']!} /> },
  { path: '/settings', page: ({ context }) => <SettingsPage session={context} /> },
  { path: '/settings/plan', page: ({ context }) => <PlanPage session={context} /> },
  { path: '/settings/keys', page: ({ context }) => <KeysPage session={context} /> },
  { path: '/settings/keys/:id', page: ({ params, context }) => <KeyPage keyId={params['id']!} session={context} /> },
];

/** What the pages outside a session are given: the way to sign in with the session a page has made. */
type SignedIn = (session: Session) => void;

/**
 * The pages of a link sent by e-mail, shown whoever is signed in here before: each signs its owner in (a verified
 * address, a new member from an invitation, a reset password; the sessions a reset ends include any open here).
 */
export const LINK_ROUTES: Route<SignedIn>[] = [
  { path: '/verify', page: ({ context }) => <Verify onSignedIn={context} /> },
  { path: '/accept', page: ({ context }) => <AcceptInvitation onSignedIn={context} /> },
  { path: '/reset', page: ({ context }) => <ResetPassword onSignedIn={context} /> },
];

/** The pages only the signed out see; there, any other path shows the sign-in page. */
export const SIGNED_OUT_ROUTES: Route<SignedIn>[] = [
  { path: '/signup', page: () => <SignUp /> },
  { path: '/forgot', page: () => <ForgotPassword /> },
];
