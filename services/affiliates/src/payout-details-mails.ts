import { composeMail, enqueueMail } from '@platform/shared/mail';
import type { Queryable } from '@platform/shared/db';
import type { MaskedPayoutDetails } from '@platform/shared/schemas/tax-forms';
import type { AffiliatesDeps } from './deps.ts';
import { merchantName } from './queries/programmes.ts';

/** The masked details in a line of a mail: the method and its masked fields. */
const describe = (d: MaskedPayoutDetails) =>
  [d.method ?? 'none', d.paypal_email, d.iban, d.routing_number, d.account_number].filter(Boolean).join(' ');

/**
 * After the affiliate changed its payout details in the portal: what is on file now (masked), so that a change it
 * did not make is noticed. Written in the transaction of the change (docs/PORTAL.md), so it is sent if and only if
 * the change commits.
 */
export async function mailPayoutDetailsChanged(
  tx: Queryable,
  deps: AffiliatesDeps,
  merchantId: string,
  to: string,
  masked: MaskedPayoutDetails,
): Promise<void> {
  const programme = await merchantName(tx, merchantId);
  const portalUrl = `${deps.publicBaseUrl.replace(/\/+$/, '')}/portal/payout-settings`;
  await enqueueMail(tx, deps.vaultKeys[0]!, {
    merchantId,
    kind: 'payout_details_changed',
    to,
    subject: `Your payout details for ${programme} were changed`,
    content: composeMail(
      [
        `Your payout details for ${programme} were changed. They are now: ${describe(masked)}.`,
        `If you did not change them, contact ${programme} at once.`,
      ],
      { url: portalUrl, label: 'See them in the portal' },
    ),
  });
}
