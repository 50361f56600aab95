import { ErrorEnvelopeSchema } from '@platform/shared/errors';
import {
  PortalListQuery,
  PortalPerformanceQuery,
  PortalSignInBody,
  PortalSwitchBody,
} from '@platform/shared/schemas/portal';
import { MaskedPayoutDetails, PayoutDetailsBody, TaxForm, TaxFormBody } from '@platform/shared/schemas/tax-forms';
import { jsonRouteSpec, jsonSpec, passedOn, type JsonSpec } from '../../http/openapi/json-spec.ts';
import type { SurfaceSpec } from '../../http/openapi/spec.ts';
import { PORTAL_COOKIE } from './sessions.ts';
import {
  PortalAccepted,
  PortalCommissionPage,
  PortalHome,
  PortalPayoutPage,
  PortalPayoutSettings,
  PortalPerformance,
  PortalSession,
  PortalTeam,
} from './schemas.ts';

/**
 * Every route of the affiliate portal's API (/portal/api), in the order the router tries them; their handlers are in
 * routes-*.ts. A live portal session unless `auth` says otherwise (and its CSRF header on every change).
 */
export const portalSpecs = {
  // Sign-in, the session, switching programme, sign-out (routes-session.ts).
  signIn: jsonSpec({
    operationId: 'signIn',
    method: 'post',
    path: '/portal/api/sign-in',
    summary: 'Mail a sign-in link to an approved affiliate’s address',
    description:
      'Always 202 and the same body, whether or not the address is an approved affiliate’s anywhere; counted against the link limits (429 with Retry-After).',
    auth: 'none',
    body: PortalSignInBody,
    success: { status: 202, schema: PortalAccepted, description: 'taken' },
  }),
  getSession: jsonSpec({
    operationId: 'getSession',
    method: 'get',
    path: '/portal/api/session',
    summary: 'The person signed in, the programme shown and the others they may switch to',
    success: { status: 200, schema: PortalSession, description: 'the session' },
  }),
  switchProgramme: jsonSpec({
    operationId: 'switchProgramme',
    method: 'post',
    path: '/portal/api/session/programme',
    summary: 'Show another programme of the same address (an embedded session has its one affiliate only)',
    body: PortalSwitchBody,
    success: { status: 200, schema: PortalSession, description: 'the session, on the programme asked for' },
  }),
  signOut: jsonSpec({
    operationId: 'signOut',
    method: 'post',
    path: '/portal/api/sign-out',
    summary: 'End the session and clear its cookie',
    success: { status: 204, schema: PortalAccepted, description: 'signed out' },
  }),
  // The figures (routes-data.ts).
  getHome: jsonSpec({
    operationId: 'getHome',
    method: 'get',
    path: '/portal/api/home',
    summary: 'The referral link, the coupons and this month’s figures',
    success: { status: 200, schema: PortalHome, description: 'the home page’s figures' },
  }),
  getPerformance: jsonSpec({
    operationId: 'getPerformance',
    method: 'get',
    path: '/portal/api/performance',
    summary: 'Clicks, conversions, revenue and commissions by day, week or month',
    query: PortalPerformanceQuery,
    success: { status: 200, schema: PortalPerformance, description: 'the buckets' },
  }),
  listCommissions: jsonSpec({
    operationId: 'listCommissions',
    method: 'get',
    path: '/portal/api/commissions',
    summary: 'The affiliate’s commissions, newest first',
    query: PortalListQuery,
    success: { status: 200, schema: PortalCommissionPage, description: 'a page of commissions' },
  }),
  listPayouts: jsonSpec({
    operationId: 'listPayouts',
    method: 'get',
    path: '/portal/api/payouts',
    summary: 'The affiliate’s payouts, newest first',
    query: PortalListQuery,
    success: { status: 200, schema: PortalPayoutPage, description: 'a page of payouts' },
  }),
  getTeam: jsonSpec({
    operationId: 'getTeam',
    method: 'get',
    path: '/portal/api/team',
    summary: 'The recruit link and the number of affiliates recruited',
    success: { status: 200, schema: PortalTeam, description: 'the team' },
  }),
  // Payout details and tax forms (routes-payout-settings.ts).
  getPayoutSettings: jsonSpec({
    operationId: 'getPayoutSettings',
    method: 'get',
    path: '/portal/api/payout-settings',
    summary: 'The payout details on file (masked), the tax forms, and whether this session may change them',
    success: { status: 200, schema: PortalPayoutSettings, description: 'the payout settings' },
  }),
  requestPayoutSettingsLink: jsonSpec({
    operationId: 'requestPayoutSettingsLink',
    method: 'post',
    path: '/portal/api/payout-settings/link',
    summary: 'Mail a fresh link that lets the session it opens change payout details and tax forms',
    description: 'Counted against the same limits as sign-in links (429 with Retry-After).',
    success: { status: 202, schema: PortalAccepted, description: 'mailed' },
  }),
  putPayoutDetails: passedOn(
    jsonSpec({
      operationId: 'putPayoutDetails',
      method: 'put',
      path: '/portal/api/payout-details',
      summary: 'Replace the payout details (a session a fresh link opened only, else 403)',
      body: PayoutDetailsBody,
      success: { status: 200, schema: MaskedPayoutDetails, description: 'the payout details, masked' },
    }),
  ),
  createTaxForm: passedOn(
    jsonSpec({
      operationId: 'createTaxForm',
      method: 'post',
      path: '/portal/api/tax-forms',
      summary: 'File a tax form (a session a fresh link opened only, else 403)',
      body: TaxFormBody,
      success: { status: 201, schema: TaxForm, description: 'the form, its TIN masked' },
    }),
  ),
};

/** The surface of /portal/api/openapi; the portal's typed client is generated from its document. */
export function portalSurface(): SurfaceSpec {
  return {
    info: {
      title: 'Affiliate portal API',
      version: '1.0.0',
      description:
        'The affiliate portal’s routes, every answer the signed-in affiliate’s own; signed in by session cookie, with X-Portal-CSRF on changes.',
    },
    securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: PORTAL_COOKIE } },
    routes: Object.values(portalSpecs).map((s: JsonSpec) => jsonRouteSpec(s, 'session')),
    schemas: { Error: ErrorEnvelopeSchema },
  };
}
