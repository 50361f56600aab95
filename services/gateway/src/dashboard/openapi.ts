import type { TSchema } from '@sinclair/typebox';
import { ErrorEnvelopeSchema } from '@platform/shared/errors';
import { lift, objectParameters } from '../openapi.ts';
import type { DashboardRoute } from './define.ts';

type Json = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of the dashboard's own API (/dashboard/api/openapi), from the same route entries and
 * schemas the router validates with. The dashboard's typed client is generated from it and from the public
 * document (services/dashboard/generate-client.ts).
 */
export function buildDashboardOpenApi(routes: DashboardRoute[]): Json {
  const components: Record<string, Json> = {};
  const toJson = (schema: TSchema): Json => lift(JSON.parse(JSON.stringify(schema)) as Json, components, true);
  components['Error'] = lift(JSON.parse(JSON.stringify(ErrorEnvelopeSchema)) as Json, components, false);
  const error = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes) {
    const parameters = [...objectParameters(r.params, 'path', toJson), ...objectParameters(r.query, 'query', toJson)];
    const ok = r.success;
    (paths[r.path] ??= {})[r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      security: r.auth === 'session' ? [{ session: [] }] : [],
      ...(parameters.length ? { parameters } : {}),
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toJson(r.body) } } } }
        : {}),
      responses: {
        [String(ok.status)]: {
          description: ok.description,
          ...(ok.status === 204 ? {} : { content: { 'application/json': { schema: toJson(ok.schema) } } }),
        },
        default: { description: 'the error envelope', ...error },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Affiliate dashboard API',
      version: '1.0.0',
      description: 'The merchant dashboard’s own routes; signed in by session cookie, with X-CSRF-Token on changes.',
    },
    paths,
    components: {
      securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'dash_session' } },
      schemas: components,
    },
  };
}
