import express from 'express';
import { apiV1Surface } from '../../surfaces/api-v1/specs.ts';
import { dashboardSurface } from '../../surfaces/dashboard/specs.ts';
import { portalSurface } from '../../surfaces/portal/specs.ts';
import { paymentsSurface } from '../../surfaces/v1/specs.ts';
import { generateOpenApi } from './generate.ts';
import type { Json } from './spec.ts';

/**
 * Each surface's OpenAPI document, by the one generator from that surface's specs. The dashboard's and the portal's
 * typed clients (services/dashboard/build.ts) and the tests' response checker (test/helpers/client.ts) use these; the
 * gateway serves them at /api/v1/openapi, /v1/openapi, /dashboard/api/openapi and /portal/api/openapi.
 */
export const apiV1Document = (serverUrl?: string): Json => generateOpenApi(apiV1Surface(serverUrl));
export const paymentsDocument = (serverUrl: string): Json => generateOpenApi(paymentsSurface(serverUrl));
export const dashboardDocument = (): Json => generateOpenApi(dashboardSurface());
export const portalDocument = (): Json => generateOpenApi(portalSurface());

/** GET `path`: the document, public, its JSON made once; `route` labels it in the request metrics. */
export function serveDocument(path: string, route: string, document: Json): express.Router {
  const text = JSON.stringify(document);
  const router = express.Router();
  router.get(path, (_req, res) => {
    res.locals['route'] = route;
    res.type('application/json').send(text);
  });
  return router;
}
