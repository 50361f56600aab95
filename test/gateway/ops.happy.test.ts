import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import t from 'tap';
import { runScript } from '../helpers/cli.ts';
import { newId } from '@platform/shared/ids';
import { eventually, spawnService, startPlatform } from '../helpers/platform.ts';
import { assertError } from './expect.ts';

const platform = await startPlatform(t);
const { client } = await platform.merchant();
const gatewayOps = `http://127.0.0.1:${platform.gateways[0]!.opsPort}`;
const affiliatesOps = `http://127.0.0.1:${platform.affiliates.opsPort}`;
const GENERATED_ID = /^req_[0-9a-hjkmnp-tv-z]{26}$/;

t.test('every response carries a generated x-request-id, repeated in error bodies', async (t) => {
  const responses = [
    await client.get('/api/v1/affiliates'),
    await client.post('/api/v1/affiliates', { email: 'rid@example.com' }),
    await client.get(`/api/v1/affiliates/${newId('aff')}`),
    await client.get('/api/v1/affiliates?limit=0'),
    await client.get('/api/v1/nope'),
    await client.get('/nope'),
    await platform.client().get('/api/v1/affiliates'),
    await platform.client().get('/api/v1/openapi'),
    await platform.client().get('/healthz'),
  ];
  const ids = responses.map((r) => r.headers.get('x-request-id'));
  for (const [i, r] of responses.entries()) {
    t.match(ids[i] ?? '', GENERATED_ID, `${r.status}: x-request-id is req_…`);
    if (r.status >= 400) t.equal(r.body.error.request_id, ids[i], `${r.status}: error.request_id repeats it`);
  }
  t.equal(new Set(ids).size, ids.length, 'a new id for every request');
});

t.test("a caller's safe x-request-id is echoed, carried to the service, and repeated in errors", async (t) => {
  for (const id of ['abc-123_XYZ.trace:1', 'a'.repeat(128), '0af7651916cd43dd8448eb211c80319c']) {
    const ok = await client.get('/api/v1/affiliates', { headers: { 'x-request-id': id } });
    t.equal(ok.headers.get('x-request-id'), id, `echoed on 200: ${id.slice(0, 40)}`);
    const missing = await client.get(`/api/v1/affiliates/${newId('aff')}`, { headers: { 'x-request-id': id } });
    assertError(t, missing, 404, 'NOT_FOUND');
    t.equal(missing.body.error.request_id, id);
    const unauthorized = await platform.client().get('/api/v1/affiliates', { headers: { 'x-request-id': id } });
    t.equal(unauthorized.body.error.request_id, id, 'also before authentication');
  }
  const traced = 'trace-to-the-service-42';
  await client.post('/api/v1/affiliates', { email: 'traced@example.com' }, { headers: { 'x-request-id': traced } });
  const line = platform.logs.find(
    (l) => l.includes('"service":"affiliates"') && l.includes(`"request_id":"${traced}"`),
  );
  t.ok(line, 'the affiliates service logged the same request id');
});

t.test('an unsafe incoming x-request-id is replaced by a generated one', async (t) => {
  const unsafe = [
    'has space',
    'a'.repeat(129),
    '<script>alert(1)</script>',
    '../../etc/passwd',
    'semi;colon',
    'quote"d',
    'tab\there',
    'ünïcödé',
    '{"json":1}',
    '',
  ];
  for (const id of unsafe) {
    const res = await platform.client().get('/api/v1/affiliates', { headers: { 'x-request-id': id } });
    const got = res.headers.get('x-request-id') ?? '';
    t.match(got, GENERATED_ID, `${JSON.stringify(id.slice(0, 30))} replaced`);
    t.equal(res.body.error.request_id, got);
    t.notOk(res.text.includes(id) && id.length > 0, 'the unsafe value is not reflected');
  }
});

function parseMetrics(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .map((l) => {
      const m = /^[^{]+\{(.*)\} (\S+)$/.exec(l)!;
      const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { labels, value: Number(m[2]) };
    });
}

t.test('the gateway ops server answers /healthz, /readyz and /metrics with route and status labels', async (t) => {
  await client.get('/api/v1/affiliates');
  await client.get(`/api/v1/affiliates/${newId('aff')}`);
  const health = await fetch(`${gatewayOps}/healthz`);
  t.equal(health.status, 200);
  t.same(await health.json(), { status: 'ok' });
  const ready = await fetch(`${gatewayOps}/readyz`);
  t.equal(ready.status, 200);
  t.same(await ready.json(), { status: 'ready' });
  const metrics = await fetch(`${gatewayOps}/metrics`);
  t.equal(metrics.status, 200);
  t.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await metrics.text();
  const requests = parseMetrics(text, 'http_requests_total');
  const find = (route: string, status: string) =>
    requests.find((r) => r.labels['route'] === route && r.labels['status'] === status);
  t.ok((find('listAffiliates', '200')?.value ?? 0) >= 1, 'http_requests_total{route="listAffiliates",status="200"}');
  t.ok((find('getAffiliate', '404')?.value ?? 0) >= 1, 'http_requests_total{route="getAffiliate",status="404"}');
  t.equal(find('listAffiliates', '200')?.labels['service'], 'gateway');
  t.ok(
    parseMetrics(text, 'http_request_duration_seconds_count').some(
      (r) => r.labels['route'] === 'listAffiliates' && r.labels['status'] === '200',
    ),
    'a latency histogram by route and status',
  );
  t.equal((await fetch(`${gatewayOps}/nope`)).status, 404);
  // The ops endpoints are not on the public port.
  assertError(t, await platform.client().get('/metrics'), 404, 'NOT_FOUND');
});

t.test('the affiliates ops server answers /healthz, /readyz and /metrics with operation and code labels', async (t) => {
  t.equal((await fetch(`${affiliatesOps}/healthz`)).status, 200);
  const ready = await fetch(`${affiliatesOps}/readyz`);
  t.equal(ready.status, 200);
  t.same(await ready.json(), { status: 'ready' });
  const text = await (await fetch(`${affiliatesOps}/metrics`)).text();
  const durations = parseMetrics(text, 'operation_duration_seconds_count');
  t.ok(
    durations.some((d) => d.labels['operation'] === 'listAffiliates' && d.labels['code'] === 'ok' && d.value >= 1),
    'operation_duration_seconds{operation="listAffiliates",code="ok"}',
  );
  t.ok(
    durations.some((d) => d.labels['operation'] === 'getAffiliate' && d.labels['code'] === 'NOT_FOUND'),
    'and the error code of a failed one',
  );
  t.ok(
    parseMetrics(text, 'operations_total').some((d) => d.labels['service'] === 'affiliates'),
    'operations_total',
  );
});

function serviceEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...platform.env, PORT: '0', OPS_PORT: '0', LOG_LEVEL: 'info', ...extra };
}

t.test('SIGTERM while a request is in flight: the request finishes, then the gateway exits 0', async (t) => {
  const gw = await spawnService(t, 'gateway', serviceEnv());
  const listening = gw.output.map((l) => l.trim()).find((l) => l.includes('"msg":"listening"'));
  const port = (JSON.parse(listening!) as { port: number }).port;
  t.ok(port > 0, `listening on ${port}`);

  const m = await platform.merchant();
  const body = JSON.stringify({ email: 'in-flight@example.com', display_name: 'In Flight' });
  // A keep-alive client, as a load balancer would be: the gateway must not wait for its idle socket.
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  let responseError: Error | null = null;
  let pending: () => void = () => {};
  const response = new Promise<{ res: IncomingMessage; text: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/affiliates',
        agent,
        headers: {
          authorization: `Bearer ${m.key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ res, text }));
      },
    );
    req.on('error', (e) => {
      responseError = e;
      reject(e);
    });
    req.write(body.slice(0, 10));
    pending = () => req.end(body.slice(10));
  });
  response.catch(() => {});

  // The gateway has authenticated the request (its rate window row exists) and is waiting for the rest of the body.
  await eventually(
    async () =>
      (await platform.sql`select 1 from api_rate_windows where key_id = ${m.keyId}`).length ? true : undefined,
    10_000,
    'the request to reach the gateway',
  );
  gw.child.kill('SIGTERM');
  await eventually(
    async () => (gw.output.some((l) => l.includes('SIGTERM: draining')) ? true : undefined),
    10_000,
    'the gateway to start draining',
  );

  // It no longer accepts new connections…
  const refused = await new Promise<string>((resolve) => {
    const r = httpRequest({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) =>
      resolve(`answered ${res.statusCode}`),
    );
    r.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    r.end();
  });
  t.equal(refused, 'ECONNREFUSED', 'new connections are refused while draining');
  t.equal(gw.child.exitCode, null, 'but the process waits for the request in flight');

  // …and the one in flight completes normally.
  pending();
  const { res, text } = await response;
  t.equal(responseError, null);
  t.equal(res.statusCode, 201, text);
  const created = JSON.parse(text) as { id: string; email: string };
  t.equal(created.email, 'in-flight@example.com');
  const rows = await platform.sql`select id from affiliates where id = ${created.id}`;
  t.equal(rows.length, 1, 'and it was stored');

  const code = await Promise.race([
    gw.exited,
    new Promise<string>((r) => setTimeout(() => r('still running after 10 s'), 10_000).unref()),
  ]);
  t.equal(code, 0, 'the gateway exits 0 once the request is done');
  t.ok(
    gw.output.some((l) => l.includes('"msg":"stopped"')),
    'after logging that it stopped',
  );
});

/** Starts the gateway process with a configuration and waits for it to exit (it must not start). */
const runGateway = (env: Record<string, string>) => runScript('services/gateway/src/main.ts', [], env);

t.test('a bad configuration value stops the gateway with a message naming the variable', async (t) => {
  const cases: [string, string][] = [
    ['PORT', 'abc'],
    ['NATS_URL', 'foo'],
    ['RPC_TIMEOUT_MS', 'soon'],
    // Key lookups may be cached at most one second, or revocation would take longer to apply.
    ['KEY_CACHE_MS', '5000'],
  ];
  for (const [variable, value] of cases) {
    const out = await runGateway(serviceEnv({ [variable]: value }));
    t.equal(out.code, 78, `${variable}=${value}: exits 78 (EX_CONFIG), not 0`);
    t.match(
      out.stderr,
      new RegExp(`configuration: ${variable}\\b`),
      `${variable}=${value}: the message names ${variable}`,
    );
    t.notMatch(out.stderr, /\n\s+at /, `${variable}=${value}: no stack trace`);
    t.notMatch(out.stdout, /"msg":"listening"/, `${variable}=${value}: it never listened`);
  }
});
