import { Type, type TSchema } from '@sinclair/typebox';

export const Timestamp = (description: string) =>
  Type.String({ format: 'date-time', description, examples: ['2026-11-22T09:53:01.789Z'] });

export const NullableTimestamp = (description: string) =>
  Type.Union([Timestamp(description), Type.Null()], { description });

export const Limit = Type.Integer({
  minimum: 1,
  maximum: 100,
  default: 25,
  description: 'page size, 1 to 100 (default 25); outside that range the request is rejected',
  examples: [25],
});

export const Cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'the next_cursor of the previous page, handed back unchanged',
  examples: ['eyJjIjoiMjAyNi0xMS0yMlQwOTo1MzowMS43ODlaIiwiaSI6ImFmZl8wMWpkM3Q2bTBzMmU0dzV4Nnk3ejhhOWIwYyJ9.k1yC2V'],
});

export const ListOf = <T extends TSchema>(item: T, id: string) =>
  Type.Object(
    {
      data: Type.Array(item, { description: 'this page, newest first' }),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'pass as cursor to get the next page; null on the last page',
      }),
    },
    { additionalProperties: false, $id: id },
  );

export const NoInput = Type.Object({}, { additionalProperties: false });

/** The schema of a 204 success: there is no body, and the OpenAPI document lists no content for it. */
export const NoContent = Type.Null({ description: 'no body' });

/** The `created_after` and `created_before` filters of a list: both bounds exclusive, any ISO 8601 date-time. */
export const CreatedRange = (what: string) => ({
  created_after: Type.Optional(
    Type.String({
      format: 'date-time',
      description: `only ${what} created after this instant (exclusive), ISO 8601 with an offset`,
      examples: ['2026-11-01T00:00:00Z'],
    }),
  ),
  created_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description: `only ${what} created before this instant (exclusive), ISO 8601 with an offset`,
      examples: ['2026-12-01T00:00:00Z'],
    }),
  ),
});

/** The `affiliate_id` filter of a list. */
export const AffiliateIdFilter = (description: string) =>
  Type.Optional(
    Type.String({
      pattern: '^aff_[0-9a-hjkmnp-tv-z]{26}$',
      description,
      examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
  );
