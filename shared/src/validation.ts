import type { TSchema } from '@sinclair/typebox';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
export type { ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { ApiError, type ErrorDetail } from './errors.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv2020,
) => Ajv2020;

/** The instants a `date-time` may name: from 1970 to the end of year 9999, in UTC. */
const INSTANT_MIN_MS = Date.UTC(1970, 0, 1);
const INSTANT_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `date-time` as RFC 3339 writes it (ajv-formats), and also an instant JavaScript and Postgres both read the same
 * way: a leap second (23:59:60, which Date.parse cannot read), year 0 (which Postgres has not) or an offset that
 * carries 9999-12-31 into year 10000 would otherwise pass the schema and fail the query.
 */
function withInstants(ajv: Ajv2020): Ajv2020 {
  const rfc3339 = fullFormats['date-time'] as {
    validate: (s: string) => boolean;
    compare: (a: string, b: string) => number | undefined;
  };
  return ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => {
      if (!rfc3339.validate(s)) return false;
      const ms = Date.parse(s);
      return Number.isFinite(ms) && ms >= INSTANT_MIN_MS && ms <= INSTANT_MAX_MS;
    },
    compare: rfc3339.compare,
  });
}

// Bodies are JSON: types must already be right. Query strings arrive as text: "25" may become 25.
// `discriminator`: a union tagged by one field (the tax forms) is checked against the branch the field names only;
// `verbose` gives its error the schema, which lists the accepted tags.
const bodyAjv = withInstants(
  addFormats(new Ajv2020({ allErrors: true, strict: false, useDefaults: false, discriminator: true, verbose: true })),
);
const queryAjv = withInstants(
  addFormats(new Ajv2020({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true })),
);

export type Location = 'body' | 'query' | 'params';

/**
 * A schema with an `$id` can reach ajv twice: on its own, and as a copy inside a larger schema (TypeBox copies what
 * it composes: the onboarding submission holds the payout details). ajv registers the `$id` with whichever comes
 * first and refuses a second schema under it, so the one that comes second is the one registered, when it is the
 * same schema. Two different schemas under one `$id` are still refused.
 */
function compileOnce(ajv: Ajv2020, schema: TSchema): ValidateFunction {
  const id = typeof schema.$id === 'string' ? schema.$id : undefined;
  const registered = id ? ajv.getSchema(id) : undefined;
  if (registered && JSON.stringify(registered.schema) === JSON.stringify(schema)) return registered;
  return ajv.compile(schema);
}

/**
 * How a surface words a refused input, as the idempotency middleware takes its refusals: the error envelope's
 * INVALID_INPUT with per-field details (envelopeRefusals), or the /v1 surface's Stripe errors.
 */
export interface InputRefusals {
  /** A string (or key) holding U+0000, at `path` (dotted; '' for the value itself). */
  nul(path: string, location: Location): Error;
  /** What the schema refused: every error ajv found, in its order. */
  invalid(errors: ErrorObject[], location: Location): Error;
}

export const envelopeRefusals: InputRefusals = {
  nul: (path, location) =>
    new ApiError('INVALID_INPUT', 'The request is invalid', [
      { path: path || location, message: 'must not contain NUL characters' },
    ]),
  invalid: (errors, location) => new ApiError('INVALID_INPUT', 'The request is invalid', toDetails(errors, location)),
};

/**
 * Compiles a schema into a function that returns the (possibly coerced) value or throws the refusal (INVALID_INPUT
 * unless `refusals` words it otherwise). Bodies are checked as JSON; query strings and path parameters (and any
 * input that arrives as text, as form parameters do) are coerced.
 */
export function compileValidator<T>(
  schema: TSchema,
  location: Location,
  refusals: InputRefusals = envelopeRefusals,
): (value: unknown) => T {
  // Compiled on first use: a process defines a validator for every operation and route it serves, and compiling
  // them all at start was most of a start's CPU, for inputs most processes (a test's, a replica's) never see.
  let validate: ValidateFunction | undefined;
  return (value: unknown): T => {
    const nul = findNul(value, '');
    if (nul !== null) throw refusals.nul(nul, location);
    validate ??= compileOnce(location === 'body' ? bodyAjv : queryAjv, schema);
    if (!validate(value)) throw refusals.invalid(validate.errors ?? [], location);
    return value as T;
  };
}

function toDetails(errors: ErrorObject[], location: Location): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  // A union of literals fails with one `const` error per literal: say once which values are allowed.
  const allowed = new Map<string, unknown[]>();
  for (const e of errors) {
    if (e.keyword === 'const')
      allowed.set(e.instancePath, [...(allowed.get(e.instancePath) ?? []), e.params['allowedValue']]);
  }
  for (const e of errors) {
    // Union branches repeat themselves; report each path once with the first message.
    let path = pointerToPath(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      path = join(path, String(e.params['additionalProperty']));
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      path = join(path, String(e.params['missingProperty']));
      message = 'is required';
    } else if (e.keyword === 'const' || (e.keyword === 'anyOf' && allowed.has(e.instancePath))) {
      message = `must be one of: ${(allowed.get(e.instancePath) ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'discriminator') {
      path = join(path, String(e.params['tag']));
      message = `must be one of: ${taggedValues(e).join(', ')}`;
    } else if (e.keyword === 'minProperties') {
      message = 'must name at least one field';
    }
    const shown = path || location;
    if (seen.has(shown)) continue;
    seen.add(shown);
    details.push({ path: shown, message });
  }
  return details;
}

/** The tag values a discriminated union accepts, read from its branches. */
function taggedValues(e: ErrorObject): string[] {
  const tag = String(e.params['tag']);
  const branches = (e.parentSchema?.['oneOf'] ?? []) as { properties?: Record<string, { const?: unknown }> }[];
  return branches.map((b) => JSON.stringify(b.properties?.[tag]?.const));
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
}

const join = (base: string, key: string) => (base ? `${base}.${key}` : key);

/** Postgres text cannot hold U+0000, so it is refused at the door instead of failing in the database. */
function findNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}[${i}]`);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return join(path, k.replaceAll('\u0000', '\\u0000'));
      const hit = findNul(v, join(path, k));
      if (hit !== null) return hit;
    }
  }
  return null;
}
