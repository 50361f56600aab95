import t from 'tap';
import { apiV1Document, dashboardDocument } from '@platform/gateway/http/openapi/documents';
import { startDashboardPlatform } from '../helpers/dashboard.ts';

// The dashboard's typed client is generated (services/dashboard/build.ts) from what these functions make; the
// running gateway must serve exactly that, or the client and the API could drift apart.
const { platform } = await startDashboardPlatform(t);

t.test('the documents the client is generated from are the ones the gateway serves', async (t) => {
  const publicDoc = (await (await fetch(`${platform.baseUrl}/api/v1/openapi`)).json()) as Record<string, unknown>;
  const { servers: _servers, ...served } = publicDoc;
  const { servers: _none, ...generated } = apiV1Document();
  t.same(served, generated, 'the public API (servers aside: the deployment names them)');
  const dashboardDoc = await (await fetch(`${platform.baseUrl}/dashboard/api/openapi`)).json();
  t.same(dashboardDoc, dashboardDocument(), 'the dashboard’s own routes');
});
