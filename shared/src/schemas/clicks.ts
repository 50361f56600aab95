import { Type, type Static } from '@sinclair/typebox';
import { AffiliateIdFilter, CreatedRange, Cursor, Limit, ListOf, Timestamp } from './common.ts';

/** GET /api/v1/clicks: referral clicks (the visits the /r/… links and the tracking script record), read back. */

export const CLICK_DEVICES = ['desktop', 'mobile', 'tablet', 'bot', 'other'] as const;
export type ClickDevice = (typeof CLICK_DEVICES)[number];

const ClickId = Type.String({
  description: 'identifier: the visit id, the `_svc_sess` cookie value',
  examples: ['vis_01jd3t6m0s2e4w5x6y7z8a9b0c'],
});

export const Click = Type.Object(
  {
    id: ClickId,
    object: Type.Literal('click'),
    affiliate_id: Type.String({
      description: 'the affiliate whose link or ?via= the visitor came by',
      examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    landing_url: Type.Union([Type.String(), Type.Null()], {
      description:
        'the page the visitor was sent to (a referral link) or landed on (the tracking script); null when unknown',
      examples: ['https://shop.example.com/?via=jane-doe'],
    }),
    referrer: Type.Union([Type.String(), Type.Null()], {
      description:
        "the host of the page the visitor came from (the browser's Referer, or the referrer the tracking script " +
        'reports), in lower case; null when the browser sent none',
      examples: ['news.example.org'],
    }),
    country: Type.Union([Type.String({ pattern: '^[A-Z]{2}$' }), Type.Null()], {
      description:
        "ISO 3166-1 alpha-2 code of the visitor's country, from the header the platform's CDN or ingress sets; null " +
        'when the platform has none configured or it named no country',
      examples: ['DE'],
    }),
    device: Type.Union(
      CLICK_DEVICES.map((d) => Type.Literal(d)),
      {
        description:
          'the class of device, from the user agent: `bot` for crawlers, link previews and HTTP libraries (not ' +
          'counted as clicks in analytics); `other` when unknown',
        examples: ['mobile'],
      },
    ),
    converted: Type.Union([Type.String(), Type.Null()], {
      description:
        'the id of the first conversion event (not a refund) credited through this click by its cookie, or null',
      examples: ['evt_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    created_at: Timestamp('when the click was recorded'),
  },
  {
    additionalProperties: false,
    $id: 'Click',
    description:
      "A referral click. The visitor's IP address and user agent are never returned. Clicks are kept for the " +
      "platform's visit retention (at least 366 days); an older one is gone (404).",
  },
);
export type Click = Static<typeof Click>;

export const ClickList = ListOf(Click, 'ClickList');

export const ListClicksQuery = Type.Object(
  {
    affiliate_id: AffiliateIdFilter("only this affiliate's clicks"),
    ...CreatedRange('clicks'),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const ClickIdParams = Type.Object(
  { click_id: Type.String({ description: 'a click id', examples: ['vis_01jd3t6m0s2e4w5x6y7z8a9b0c'] }) },
  { additionalProperties: false },
);
