import type { ComponentChildren } from 'preact';
import type { Session } from '../api.ts';
import { AffiliatePage } from './affiliate.tsx';
import { AffiliatesPage } from './affiliates.tsx';
import { BalancePage } from './balance.tsx';
import { CommissionsPage } from './commissions.tsx';
import { KeyPage } from './key.tsx';
import { KeysPage } from './keys.tsx';
import { NotFound } from './not-found.tsx';
import { OverviewPage } from './overview.tsx';
import { PayoutsPage } from './payouts.tsx';
import { SettingsPage } from './settings.tsx';
import { WebhookPage } from './webhook.tsx';
import { WebhooksPage } from './webhooks.tsx';

/** The page for a path inside /dashboard (ids in the path are checked by the API: another merchant's are not found). */
export function pageFor(path: string, session: Session): ComponentChildren {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [section, id, more] = parts;
  if (parts.length === 0) return <OverviewPage session={session} />;
  if (section === 'settings' && id === 'keys' && parts.length === 2) return <KeysPage />;
  if (section === 'settings' && id === 'keys' && more && parts.length === 3)
    return <KeyPage key={more} keyId={more} session={session} />;
  if (section === 'affiliates' && parts.length === 1) return <AffiliatesPage />;
  if (section === 'affiliates' && id && parts.length === 2) return <AffiliatePage key={id} affiliateId={id} />;
  if (section === 'commissions' && parts.length === 1) return <CommissionsPage />;
  if (section === 'payouts' && parts.length === 1) return <PayoutsPage />;
  if (section === 'balance' && parts.length === 1) return <BalancePage />;
  if (section === 'settings' && parts.length === 1) return <SettingsPage />;
  if (section === 'webhooks' && parts.length === 1) return <WebhooksPage />;
  if (section === 'webhooks' && id && parts.length === 2) return <WebhookPage key={id} endpointId={id} />;
  return <NotFound />;
}
