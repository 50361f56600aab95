import { Type } from '@sinclair/typebox';

/**
 * What the affiliate portal's API (the gateway's /portal/api, docs/PORTAL.md) accepts. Its answers are built field by
 * field by the gateway from the services' own answers.
 */
export const PortalSignInBody = Type.Object(
  {
    email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'the address the affiliate applied with',
      examples: ['jane@example.com'],
    }),
  },
  { additionalProperties: false },
);

export const PortalSwitchBody = Type.Object(
  {
    affiliate_id: Type.String({
      maxLength: 64,
      description: "one of the address's approved affiliates",
      examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
  },
  { additionalProperties: false },
);

export const PortalListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 25', examples: [25] })),
    starting_after: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'the `next_cursor` of the page before' }),
    ),
  },
  { additionalProperties: false },
);

export const PortalPerformanceQuery = Type.Object(
  {
    group_by: Type.Optional(
      Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], { examples: ['day'] }),
    ),
    start: Type.Optional(Type.String({ format: 'date-time', examples: ['2026-10-01T00:00:00Z'] })),
    end: Type.Optional(Type.String({ format: 'date-time', examples: ['2026-11-01T00:00:00Z'] })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, examples: ['Europe/Paris'] })),
  },
  { additionalProperties: false },
);
