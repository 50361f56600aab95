/**
 * The API surfaces the reference renders, each from the OpenAPI document the gateway serves at its public URL. The
 * reference reads nothing but those URLs, so it shows what a client fetching the documents sees.
 */
export interface Surface {
  /** The reference page is /docs/{slug}. */
  slug: string;
  title: string;
  /** What the surface is for and how a request proves who sends it. */
  summary: string;
  /** Where the gateway serves the surface's OpenAPI document. */
  document: string;
}

export const SURFACES: readonly Surface[] = [
  {
    slug: 'api',
    title: 'Affiliate Program API',
    summary:
      'Affiliates, commissions, conversion events, coupons, webhooks, tax forms and payouts under /api/v1, with a ' +
      "merchant's API key (Authorization: Bearer svc_…).",
    document: '/api/v1/openapi',
  },
  {
    slug: 'payments',
    title: 'Platform payment API',
    summary:
      "Connected accounts, onboarding links, payment intents, balance transactions and payouts under /v1, in Stripe's " +
      'conventions, with a platform key (sk_test_… or sk_live_…).',
    document: '/v1/openapi',
  },
];
