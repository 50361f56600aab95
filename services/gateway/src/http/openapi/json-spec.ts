import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { NoInput } from '@platform/shared/schemas/common';
import type { RouteSpec } from './spec.ts';

/**
 * The spec of a route of a session-cookie JSON surface (/dashboard/api, /portal/api): method, path, who may call,
 * the schemas its router validates with and what it answers. Each such surface writes its routes in a `specs.ts` of
 * its own with `jsonSpec`, answers each with `handle` in its `routes-*.ts`, and makes its OpenAPI document with
 * `jsonRouteSpec`, so that its router, its document and the typed client generated from it cannot drift.
 */
export interface JsonSpec<
  P extends TObject = TObject,
  Q extends TObject = TObject,
  B extends TSchema | null = TSchema | null,
> {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The OpenAPI path template, under the surface's prefix. */
  path: string;
  summary: string;
  description?: string;
  /**
   * 'session': a live session of the surface (and, unless GET, its CSRF header); 'optional': the session if there is
   * one; 'none': sign-in itself.
   */
  auth: 'session' | 'optional' | 'none';
  params: P;
  query: Q;
  body: B;
  /**
   * Set when the body is passed on as it is to the service whose operation validates it against `body`: the router
   * then only checks that it is a JSON object (the handler is given it as `unknown`).
   */
  bodyCheckedBy?: 'service';
  success: { status: 200 | 201 | 202 | 204; schema: TSchema; description: string };
}

/** What a spec's handler is given: the input its schemas accepted. */
export type JsonInput<S extends JsonSpec> =
  S extends JsonSpec<infer P, infer Q, infer B>
    ? {
        params: Static<P>;
        query: Static<Q>;
        body: S['bodyCheckedBy'] extends 'service' ? unknown : B extends TSchema ? Static<B> : undefined;
      }
    : never;

/** A spec as written: what it leaves out is filled in by `jsonSpec`. */
export type JsonSpecFields<P extends TObject, Q extends TObject, B extends TSchema | null> = Omit<
  JsonSpec<P, Q, B>,
  'params' | 'query' | 'body' | 'auth'
> & { params?: P; query?: Q; body?: B; auth?: JsonSpec['auth'] };

/** A spec with what it leaves out filled in: no parameters, no body, a signed-in session. */
export const jsonSpec = <
  P extends TObject = typeof NoInput,
  Q extends TObject = typeof NoInput,
  B extends TSchema | null = null,
>(
  s: JsonSpecFields<P, Q, B>,
): JsonSpec<P, Q, B> => ({
  ...s,
  auth: s.auth ?? 'session',
  params: s.params ?? (NoInput as unknown as P),
  query: s.query ?? (NoInput as unknown as Q),
  body: s.body ?? (null as B),
});

/** A spec whose body the router passes on, a JSON object, to the service that validates it (`bodyCheckedBy`). */
export const passedOn = <S extends JsonSpec>(s: S): S & { bodyCheckedBy: 'service' } => ({
  ...s,
  bodyCheckedBy: 'service',
});

/** A spec and the function that answers it, given the surface's context `C`. */
export interface JsonRoute<C, S extends JsonSpec = JsonSpec> {
  spec: S;
  /** Called with the input its spec's schemas accepted. */
  handler: (ctx: C, input: { params: unknown; query: unknown; body: unknown }) => unknown;
}

/** `handle` for a surface whose handlers take the context `C`: `const handle = handlerOf<MyContext>()`. */
export const handlerOf =
  <C>() =>
  <S extends JsonSpec>(s: S, handler: (ctx: C, input: JsonInput<S>) => unknown): JsonRoute<C, S> => ({
    spec: s,
    handler: handler as unknown as JsonRoute<C, S>['handler'],
  });

/**
 * The routes in the specs' order (the order of the document), each spec answered by exactly one handler: a surface's
 * router refuses to start otherwise.
 */
export function routesOf<C, S extends JsonSpec>(surface: string, specs: S[], routes: JsonRoute<C, S>[]) {
  const bySpec = new Map(routes.map((r) => [r.spec, r]));
  if (bySpec.size !== routes.length || routes.length !== specs.length || specs.some((s) => !bySpec.has(s)))
    throw new Error(`every ${surface} spec needs exactly one handler`);
  return specs.map((s) => bySpec.get(s)!);
}

const error = { 'application/json': { $ref: '#/components/schemas/Error' } };

/**
 * A spec's entry in its surface's document: `security` names the surface's session scheme; every error is the
 * envelope, which the surface lists as its `Error` schema.
 */
export function jsonRouteSpec(s: JsonSpec, security: string, description = s.description): RouteSpec {
  return {
    operationId: s.operationId,
    method: s.method,
    path: s.path,
    summary: s.summary,
    ...(description ? { description } : {}),
    security: s.auth === 'session' ? [{ [security]: [] }] : [],
    params: s.params,
    query: s.query,
    ...(s.body ? { body: { contentType: 'application/json', schema: s.body, required: true } } : {}),
    responses: {
      [String(s.success.status)]: {
        description: s.success.description,
        ...(s.success.status === 204 ? {} : { content: { 'application/json': s.success.schema } }),
      },
      default: { description: 'the error envelope', content: error },
    },
  };
}
