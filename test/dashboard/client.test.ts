import t from 'tap';
import { buildDashboardOpenApi } from '@platform/gateway/dashboard/openapi';
import { dashboardRoutes } from '@platform/gateway/dashboard/router';
import { buildOpenApi } from '@platform/gateway/openapi';
import { startDashboardPlatform } from '../helpers/dashboard.ts';

// The dashboard's typed client is generated (services/dashboard/build.ts) from what these functions make; the
// running gateway must serve exactly that, or the client and the API could drift apart.
const { platform } = await startDashboardPlatform(t);

t.test('the documents the client is generated from are the ones the gateway serves', async (t) => {
  const publicDoc = (await (await fetch(`${platform.baseUrl}/api/v1/openapi`)).json()) as Record<string, unknown>;
  const { servers: _servers, ...served } = publicDoc;
  const { servers: _none, ...generated } = buildOpenApi() as Record<string, unknown>;
  t.same(served, generated, 'the public API (servers aside: the deployment names them)');
  const dashboardDoc = await (await fetch(`${platform.baseUrl}/dashboard/api/openapi`)).json();
  t.same(dashboardDoc, buildDashboardOpenApi(dashboardRoutes(null as never, null)), 'the dashboard’s own routes');
});
