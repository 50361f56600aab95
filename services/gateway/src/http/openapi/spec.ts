import type { TObject, TSchema } from '@sinclair/typebox';

/**
 * What every gateway surface (/api/v1, /v1, /dashboard/api, /portal/api, the onboarding pages) says about a route, apart from the
 * function that answers it: method, path, schemas, who may call. Its router validates and authenticates with the
 * spec; http/openapi/generate.ts makes the surface's OpenAPI document from the same specs, so neither can drift.
 */
export type Json = Record<string, unknown>;
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options';

/** A schema as TypeBox makes it, or plain JSON Schema (a `$ref` to a component, `{type: 'string'}`). */
export type Schema = TSchema | Json;

export interface ParameterSpec {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: Schema;
  style?: string;
  explode?: boolean;
}

export interface ResponseSpec {
  description: string;
  /** Header objects, or `$ref`s to the surface's `headers`. */
  headers?: Json;
  /** By media type; none for a response without a body (204, a redirect). */
  content?: Record<string, Schema>;
}

export interface RouteSpec {
  operationId: string;
  method: Method;
  /** The OpenAPI path template: `/api/v1/affiliates/{affiliate_id}`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /**
   * Who may call, as an OpenAPI security requirement: `[{bearer: []}]`, or `[]` for a public route. Left out, the
   * surface's default applies.
   */
  security?: Record<string, string[]>[];
  /** Path parameters, each property one (their descriptions become the parameters'). */
  params?: TObject;
  /** Query parameters, as `params`. */
  query?: TObject;
  /** Further parameters (headers, or ones described by hand), after those of `params` and `query`. */
  parameters?: ParameterSpec[];
  body?: {
    contentType: string;
    schema: Schema;
    required: boolean;
    description?: string;
    encoding?: Json;
  };
  /** By status ("200", "default"); `{$ref}` names one of the surface's shared responses. */
  responses: Record<string, ResponseSpec | { $ref: string }>;
}

/** A webhook the surface sends: its body becomes the named component. */
export interface WebhookSpec {
  name: string;
  component: string;
  body: Schema;
  operation: Omit<RouteSpec, 'method' | 'path' | 'responses' | 'body' | 'params' | 'query'> & {
    responses: Record<string, ResponseSpec>;
  };
}

/** A surface: its document's header, its shared parts and its routes. */
export interface SurfaceSpec {
  info: { title: string; version: string; description: string };
  servers?: { url: string; description?: string }[];
  /** The security requirement of a route that states none. */
  security?: Record<string, string[]>[];
  securitySchemes: Json;
  /** The document's tag list, in order. */
  tags?: string[];
  routes: RouteSpec[];
  webhooks?: WebhookSpec[];
  /** Named schemas besides those the routes' schemas name with `$id` (the error envelope, unions). */
  schemas?: Record<string, Schema>;
  headers?: Json;
  responses?: Record<string, ResponseSpec>;
}
