import { Type, type Static } from '@sinclair/typebox';
import { Cursor, Limit, ListOf, Timestamp } from './common.ts';

export const AFFILIATE_STATUSES = ['pending', 'approved', 'rejected', 'suspended'] as const;
export type AffiliateStatus = (typeof AFFILIATE_STATUSES)[number];

const AffiliateStatusSchema = Type.Union(
  AFFILIATE_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      'pending (applied, not yet approved) → approved, rejected or suspended; approved ↔ suspended; rejected is final. Only approved affiliates earn and have working links',
    examples: ['approved'],
  },
);

const Rate = Type.Number({
  minimum: 0,
  maximum: 1,
  description: 'fraction: 0.2 means 20 percent',
  examples: [0.2],
});

const Slug = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{1,62}$',
  description: 'URL-safe handle, unique per merchant; generated from the e-mail when absent',
  examples: ['jane-doe'],
});

const Email = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'unique per merchant, compared case-insensitively',
  examples: ['jane@example.com'],
});
const DisplayName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'name shown to the merchant',
  examples: ['Jane Doe'],
});

/** The public affiliate: an explicit allowlist. Vault references are not in it and never leave the service. */
export const Affiliate = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    slug: Slug,
    email: Email,
    display_name: DisplayName,
    status: AffiliateStatusSchema,
    tier_id: Type.Union([Type.String(), Type.Null()], {
      description: 'null when the affiliate has no tier',
      examples: [null],
    }),
    parent_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the parent in the lineage, or null',
      examples: [null],
    }),
    lifetime_commissions_paid: Type.Number({
      description: 'total commissions paid, in the merchant currency',
      examples: [1250.5],
    }),
    custom_commission_rate: Type.Union([Rate, Type.Null()], {
      description: 'overrides tier and default rates when set',
    }),
    referral_url: Type.String({
      format: 'uri',
      description: 'the referral link to share',
      examples: ['https://track.example.com/r/jane-doe'],
    }),
    created_at: Timestamp('creation time'),
    updated_at: Timestamp('last change'),
  },
  { additionalProperties: false, $id: 'Affiliate' },
);
export type Affiliate = Static<typeof Affiliate>;

export const AffiliateList = ListOf(Affiliate, 'AffiliateList');

export const ListAffiliatesQuery = Type.Object(
  {
    status: Type.Optional(AffiliateStatusSchema),
    email: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: 'only the affiliate with this e-mail (compared case-insensitively)',
        examples: ['jane@example.com'],
      }),
    ),
    parent_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'only the direct children of this affiliate (its lineage one level down)',
        examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
      }),
    ),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const AffiliateIdParams = Type.Object(
  { affiliate_id: Type.String({ description: 'an affiliate id' }) },
  { additionalProperties: false },
);

export const CreateAffiliateBody = Type.Object(
  {
    email: Email,
    slug: Type.Optional(Slug),
    display_name: Type.Optional(DisplayName),
    parent_email: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: 'e-mail of an existing affiliate of this merchant: the parent',
        examples: ['lead@example.com'],
      }),
    ),
    status: Type.Optional(AffiliateStatusSchema),
    custom_commission_rate: Type.Optional(Type.Union([Rate, Type.Null()])),
  },
  { additionalProperties: false, $id: 'CreateAffiliate' },
);
export type CreateAffiliateBody = Static<typeof CreateAffiliateBody>;

export const UpdateAffiliateBody = Type.Object(
  {
    status: Type.Optional(AffiliateStatusSchema),
    display_name: Type.Optional(DisplayName),
    custom_commission_rate: Type.Optional(Type.Union([Rate, Type.Null()])),
    tier_id: Type.Optional(Type.Union([Type.String({ description: 'a tier of this merchant' }), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1, $id: 'UpdateAffiliate' },
);
export type UpdateAffiliateBody = Static<typeof UpdateAffiliateBody>;
