import { composeMail, enqueueMail } from '@platform/shared/mail';
import { createPortalLink, portalLinkUrl } from '@platform/shared/portal-links';
import type { Queryable } from '@platform/shared/db';
import type { AffiliatesDeps } from './deps.ts';
import { merchantName } from './queries/programmes.ts';

/**
 * The mails of an application (docs/PORTAL.md): received, approved (with a single-use portal sign-in link) and
 * rejected. Each is written in the transaction of the change that causes it, so it is sent if and only if that
 * commits. Links come from PUBLIC_BASE_URL, never from a request.
 */

/**
 * Whom a mail goes to. Never the name the applicant typed: anyone can apply with any address, so a name in the mail
 * would let a stranger put words of their own in a mail the platform sends to that address.
 */
interface Applicant {
  id: string;
  email: string;
}

/** The mail key: the current ENCRYPTION_KEY, the first of the vault's keys. */
const mailKey = (deps: AffiliatesDeps) => deps.vaultKeys[0]!;

export async function mailApplicationReceived(tx: Queryable, deps: AffiliatesDeps, merchantId: string, a: Applicant) {
  const programme = await merchantName(tx, merchantId);
  await enqueueMail(tx, mailKey(deps), {
    merchantId,
    kind: 'application_received',
    to: a.email,
    subject: `We received your application to ${programme}`,
    content: composeMail([
      `Hello, thank you for applying to the ${programme} affiliate programme.`,
      'We will look at your application and write to you once it is decided.',
    ]),
  });
}

/** The approval, with a link (single use, 15 minutes) that signs the affiliate into the portal. */
export async function mailApplicationApproved(tx: Queryable, deps: AffiliatesDeps, merchantId: string, a: Applicant) {
  const programme = await merchantName(tx, merchantId);
  const { token } = await createPortalLink(tx, {
    purpose: 'sign_in',
    email: a.email,
    merchantId,
    affiliateId: a.id,
  });
  await enqueueMail(tx, mailKey(deps), {
    merchantId,
    kind: 'application_approved',
    to: a.email,
    subject: `Welcome to the ${programme} affiliate programme`,
    content: composeMail(
      [
        `Hello, your application to ${programme} is approved. Sign in to your affiliate portal for your referral link:`,
        'The link works once, for 15 minutes. Later, sign in at the portal with this address for a new one.',
      ],
      { url: portalLinkUrl(deps.publicBaseUrl, token), label: 'Open my affiliate portal' },
    ),
  });
}

export async function mailApplicationRejected(tx: Queryable, deps: AffiliatesDeps, merchantId: string, a: Applicant) {
  const programme = await merchantName(tx, merchantId);
  await enqueueMail(tx, mailKey(deps), {
    merchantId,
    kind: 'application_rejected',
    to: a.email,
    subject: `Your application to ${programme}`,
    content: composeMail([
      `Hello, thank you for your interest in the ${programme} affiliate programme.`,
      'We are not able to accept your application at this time. We wish you every success.',
    ]),
  });
}
