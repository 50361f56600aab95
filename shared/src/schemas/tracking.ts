import { Type, type Static } from '@sinclair/typebox';

/** POST /t/visit: what the tracking script sends from the merchant's page, and what it gets back. Public, no key. */

export const VISIT_COOKIE = '_svc_sess';

export const TrackVisitBody = Type.Object(
  {
    merchant_id: Type.String({
      maxLength: 64,
      description: 'the data-merchant attribute of the script tag',
      examples: ['mer_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    via: Type.String({
      pattern: '^[a-z0-9][a-z0-9-]{1,62}$',
      description: "the ?via= of the landing page: an approved affiliate's slug",
      examples: ['jane-doe'],
    }),
    fingerprint: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: "a visitor fingerprint from the merchant's page (data-fingerprint); used by fraud rules",
        examples: ['fp_3b1f9c'],
      }),
    ),
    landing_url: Type.Optional(
      Type.String({
        maxLength: 2048,
        pattern: '^https?://',
        description: 'the page the visitor landed on',
        examples: ['https://shop.example.com/?via=jane-doe'],
      }),
    ),
    referrer: Type.Optional(
      Type.String({
        maxLength: 2048,
        description:
          "the page's document.referrer, where the visitor came from; only its host is kept (the click's `referrer`)",
        examples: ['https://news.example.org/article/42'],
      }),
    ),
    visit_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "the browser's current _svc_sess value: when it is a live visit for the same affiliate it is kept " +
          '(a reload or the redirect of a referral link does not count twice)',
        examples: ['vis_01jd3t6m0s2e4w5x6y7z8a9b0c'],
      }),
    ),
  },
  { additionalProperties: false, $id: 'TrackVisit' },
);
export type TrackVisitBody = Static<typeof TrackVisitBody>;

export const TrackedVisit = Type.Object(
  {
    visit_id: Type.String({
      description: `the value for the ${VISIT_COOKIE} cookie`,
      examples: ['vis_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    max_age_seconds: Type.Integer({
      minimum: 0,
      description: "the cookie's Max-Age: what is left of the attribution window",
      examples: [5184000],
    }),
  },
  { additionalProperties: false, $id: 'TrackedVisit' },
);
export type TrackedVisit = Static<typeof TrackedVisit>;
