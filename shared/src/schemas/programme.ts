import { Type, type Static } from '@sinclair/typebox';

/**
 * The programme page (docs/PORTAL.md, "Programme page and applications"): the settings a merchant gives it in the
 * dashboard, and what an application sent from it carries to the affiliates service.
 */
export const PROGRAMME_SLUG = '^[a-z0-9][a-z0-9-]{1,62}$';
export const MAX_FRAME_ORIGINS = 10;

const ProgrammeSlug = Type.String({
  pattern: PROGRAMME_SLUG,
  description: 'the page is /p/{slug}; lower case, unique across merchants',
  examples: ['acme-outdoor'],
});
const Description = Type.String({
  maxLength: 4000,
  description: 'shown on the page above the form (plain text)',
  examples: ['Outdoor gear for every season. Earn on every order you refer.'],
});
const TermsUrl = Type.Union([Type.String({ maxLength: 2048, format: 'uri' }), Type.Null()], {
  description: 'the programme terms applicants accept (https; http outside production)',
  examples: ['https://shop.example.com/affiliate-terms'],
});
const FrameOrigins = Type.Array(Type.String({ maxLength: 300 }), {
  maxItems: MAX_FRAME_ORIGINS,
  description: 'origins (https://host[:port]) that may frame the affiliate portal; none: it cannot be framed',
  examples: [['https://app.example.com']],
});

/** The programme page's settings, as the dashboard shows them. */
export const ProgrammePage = Type.Object(
  {
    slug: Type.Union([ProgrammeSlug, Type.Null()], { description: 'null until the page is set up' }),
    description: Description,
    terms_url: TermsUrl,
    auto_approve: Type.Boolean({ description: 'applications are approved at once', examples: [false] }),
    frame_origins: FrameOrigins,
    commission_terms: Type.Array(Type.String(), {
      description: 'what the page tells applicants they earn: computed from the commission rules, tiers and rates',
      examples: [['10% of every sale']],
    }),
    page_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: 'the public page, null until a slug is set',
      examples: ['https://track.example.com/p/acme-outdoor'],
    }),
  },
  { additionalProperties: false, $id: 'ProgrammePage' },
);
export type ProgrammePage = Static<typeof ProgrammePage>;

/** The page's settings as a whole: each field replaces the stored one. */
export const ProgrammePageBody = Type.Object(
  {
    slug: ProgrammeSlug,
    description: Type.Optional(Description),
    terms_url: Type.Optional(TermsUrl),
    auto_approve: Type.Optional(Type.Boolean({ description: 'default false' })),
    frame_origins: Type.Optional(FrameOrigins),
  },
  { additionalProperties: false, $id: 'ProgrammePageBody' },
);
export type ProgrammePageBody = Static<typeof ProgrammePageBody>;

/** An application from the page, as the gateway forwards it (the form's fields, checked). */
export const ApplicationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'the applicant’s name' }),
    email: Type.String({ format: 'email', maxLength: 254 }),
    website: Type.String({ minLength: 1, maxLength: 2048, format: 'uri' }),
    promotion: Type.String({ minLength: 1, maxLength: 2000, description: 'how they will promote the programme' }),
    ref: Type.Optional(Type.String({ maxLength: 64, description: 'the slug of the affiliate that recruited them' })),
  },
  { additionalProperties: false },
);
export type ApplicationBody = Static<typeof ApplicationBody>;

/**
 * The service's answer to the gateway. The page shows the same whether or not the address had applied before (nothing
 * to enumerate); `created` only tells the gateway's limit whether to count the application.
 */
export const ApplicationReceived = Type.Object(
  {
    received: Type.Literal(true, { description: 'always true' }),
    created: Type.Boolean({
      description:
        'whether this application made an affiliate: the gateway counts only those against the e-mail domain limit; never shown to the applicant',
    }),
  },
  { additionalProperties: false },
);
export type ApplicationReceived = Static<typeof ApplicationReceived>;
