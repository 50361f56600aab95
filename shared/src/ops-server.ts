import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, type Registry } from 'prom-client';

/**
 * The operational endpoints every process serves on its own port (kept off the public one):
 * /healthz (the process is alive), /readyz (its Postgres and NATS connections are up), /metrics (Prometheus).
 */
export async function startOpsServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  ready: () => boolean;
}): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  // Read at scrape time: an alert on a replica that stays unready needs no probe of its own.
  new Gauge({
    name: 'service_ready',
    help: '1 while /readyz answers 200 (Postgres, NATS and the JetStream topology this process needs are there), else 0',
    registers: [opts.registry],
    collect() {
      this.set(opts.ready() ? 1 : 0);
    },
  });
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz')
      return opts.ready() ? json(res, 200, { status: 'ready' }) : json(res, 503, { status: 'not ready' });
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (body) => {
          res.writeHead(200, { 'content-type': opts.registry.contentType });
          res.end(body);
        },
        () => json(res, 500, { status: 'error' }),
      );
      return;
    }
    json(res, 404, { status: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function json(res: import('node:http').ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
