import type { TObject } from '@sinclair/typebox';
import type { Json, ResponseSpec, RouteSpec, Schema, SurfaceSpec } from './spec.ts';

/**
 * The one OpenAPI 3.1 generator of the gateway: every surface's document (GET /api/v1/openapi, /v1/openapi,
 * /dashboard/api/openapi, /portal/api/openapi) is made here from that surface's route specs, with the same TypeBox schemas its router
 * validates with. A schema carrying a `$id` becomes a component, written once and referenced wherever it is used.
 */
export function generateOpenApi(surface: SurfaceSpec): Json {
  const components: Record<string, Json> = {};
  const toJson = (schema: Schema, replaceRoot = true): Json => lift(plain(schema), components, replaceRoot);

  const paths: Record<string, Record<string, Json>> = {};
  for (const route of surface.routes) (paths[route.path] ??= {})[route.method] = operation(route, toJson);

  let webhooks: Record<string, Json> | undefined;
  for (const hook of surface.webhooks ?? []) {
    components[hook.component] = toJson(hook.body, false);
    (webhooks ??= {})[hook.name] = {
      post: {
        ...operationHeader(hook.operation),
        ...parametersOf(hook.operation, toJson),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${hook.component}` } } },
        },
        responses: responsesOf(hook.operation.responses, toJson),
      },
    };
  }
  for (const [name, schema] of Object.entries(surface.schemas ?? {})) components[name] = toJson(schema, false);

  return {
    openapi: '3.1.0',
    info: surface.info,
    ...(surface.servers ? { servers: surface.servers } : {}),
    ...(surface.security ? { security: surface.security } : {}),
    ...(surface.tags ? { tags: surface.tags.map((name) => ({ name })) } : {}),
    paths,
    ...(webhooks ? { webhooks } : {}),
    components: {
      securitySchemes: surface.securitySchemes,
      ...(surface.headers ? { headers: surface.headers } : {}),
      ...(surface.responses ? { responses: responsesOf(surface.responses, toJson) } : {}),
      schemas: components,
    },
  };
}

function operation(route: RouteSpec, toJson: (s: Schema) => Json): Json {
  const body = route.body;
  return {
    ...operationHeader(route),
    ...parametersOf(route, toJson),
    ...(body
      ? {
          requestBody: {
            required: body.required,
            ...(body.description ? { description: body.description } : {}),
            content: {
              [body.contentType]: {
                schema: toJson(body.schema),
                ...(body.encoding ? { encoding: body.encoding } : {}),
              },
            },
          },
        }
      : {}),
    responses: responsesOf(route.responses, toJson),
  };
}

function operationHeader(route: Pick<RouteSpec, 'operationId' | 'summary' | 'description' | 'tags' | 'security'>) {
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.tags ? { tags: route.tags } : {}),
    ...(route.description ? { description: route.description } : {}),
    ...(route.security ? { security: route.security } : {}),
  };
}

function parametersOf(route: Pick<RouteSpec, 'params' | 'query' | 'parameters'>, toJson: (s: Schema) => Json) {
  const parameters = [
    ...objectParameters(route.params, 'path', toJson),
    ...objectParameters(route.query, 'query', toJson),
    ...(route.parameters ?? []).map((p) => ({ ...p, schema: toJson(p.schema) })),
  ];
  return parameters.length ? { parameters } : {};
}

function responsesOf(responses: Record<string, ResponseSpec | { $ref: string }>, toJson: (s: Schema) => Json) {
  const out: Record<string, Json> = {};
  for (const [status, r] of Object.entries(responses)) {
    if ('$ref' in r) {
      out[status] = r;
      continue;
    }
    out[status] = {
      description: r.description,
      ...(r.headers ? { headers: r.headers } : {}),
      ...(r.content
        ? {
            content: Object.fromEntries(
              Object.entries(r.content).map(([type, schema]) => [type, { schema: toJson(schema) }]),
            ),
          }
        : {}),
    };
  }
  return out;
}

/** Each property of a TypeBox object as a parameter; its description is the parameter's. */
function objectParameters(schema: TObject | undefined, where: 'path' | 'query', toJson: (s: Schema) => Json): Json[] {
  if (!schema) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => {
    const json = toJson(prop);
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof json['description'] === 'string' ? { description: json['description'] } : {}),
      schema: json,
    };
  });
}

/** TypeBox's schema as plain JSON (its symbols dropped). */
const plain = (schema: Schema): Json => JSON.parse(JSON.stringify(schema)) as Json;

/** Moves every nested schema that has a $id into components and leaves a $ref in its place. */
function lift(node: Json, components: Record<string, Json>, replaceRoot: boolean): Json {
  const walk = (value: unknown, isRoot: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, false));
    if (!value || typeof value !== 'object') return value;
    const obj = value as Json;
    const out: Json = {};
    for (const [k, v] of Object.entries(obj))
      if (k !== '$id') out[k] = k === 'examples' || k === 'default' ? v : walk(v, false);
    const id = obj['$id'];
    if (typeof id === 'string' && (!isRoot || replaceRoot)) {
      components[id] ??= out;
      return { $ref: `#/components/schemas/${id}` };
    }
    return out;
  };
  return walk(node, true) as Json;
}
