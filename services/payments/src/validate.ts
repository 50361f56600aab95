import type { TSchema } from '@sinclair/typebox';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { invalidRequest } from '@platform/shared/payments/errors';

// ajv-formats is CommonJS; its default export arrives wrapped under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv2020,
) => Ajv2020;

// Form-encoded parameters are all text: "2000" may become 2000 and "true" true, as Stripe reads them.
const ajv = addFormats(new Ajv2020({ allErrors: false, strict: false, coerceTypes: true, useDefaults: true }));

/** `/transfer_data/destination` → `transfer_data[destination]`, the way a form names the parameter. */
export function bracketName(pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.map((p, i) => (i === 0 ? p : `[${p}]`)).join('');
}

function refusal(e: ErrorObject) {
  if (e.keyword === 'required') {
    const param = bracketName(e.instancePath, String(e.params['missingProperty']));
    return invalidRequest(`Missing required param: ${param}.`, { code: 'parameter_missing', param });
  }
  if (e.keyword === 'additionalProperties') {
    const param = bracketName(e.instancePath, String(e.params['additionalProperty']));
    return invalidRequest(`Received unknown parameter: ${param}`, { code: 'parameter_unknown', param });
  }
  const param = bracketName(e.instancePath);
  if (e.keyword === 'type' && e.params['type'] === 'integer')
    return invalidRequest(`Invalid integer: ${param}`, { code: 'parameter_invalid_integer', param });
  if (e.keyword === 'const' || e.keyword === 'anyOf')
    return invalidRequest(`Invalid ${param}: not one of the values this parameter takes`, { param });
  return invalidRequest(`Invalid ${param}: ${e.message ?? 'is invalid'}`, { param });
}

/** Compiles a parameter schema into a function that answers the coerced value or throws Stripe's refusal. */
export function compileParams<T>(schema: TSchema): (value: unknown) => T {
  const validate = ajv.compile(schema);
  return (value) => {
    // Postgres text cannot hold U+0000: refused here, not as a failure in the database.
    if (JSON.stringify(value).includes('\\u0000'))
      throw invalidRequest('Parameters may not contain NUL characters', { code: 'parameter_invalid_string' });
    if (!validate(value)) throw refusal(validate.errors![0]!);
    return value as T;
  };
}
