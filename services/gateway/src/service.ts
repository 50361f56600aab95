import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { connectDatabase } from '@platform/shared/db';
import { createLogger, type Logger } from '@platform/shared/log';
import { connectNats, natsCredentials } from '@platform/shared/nats';
import { startOpsServer } from '@platform/shared/ops-server';
import { trackReadiness } from '@platform/shared/readiness';
import { createApp } from './app.ts';
import { answerClientError } from './http/http-errors.ts';
import type { GatewayConfig } from './config.ts';
import { startIdempotencyPurge } from './http/idempotency/purge.ts';
import { startSigninFailurePurge } from './http/accounts/signin-purge.ts';
import { renewalDeps, startBillingRenewals } from './surfaces/dashboard/billing-renewals.ts';
import { createRequester } from './http/requester.ts';
import { createUsageRecorder } from './surfaces/api-v1/usage.ts';

/**
 * Slow clients cannot hold connections: the request line and headers must arrive within 10 s (the server checks every
 * half second, so the cut comes 9.5 to 10 s after the connection's request began), the whole request within 30 s,
 * and a keep-alive connection idle for 5 s is closed. Such a client gets 408 with the error envelope
 * (answerClientError) when nothing has been written to it yet.
 */
const SLOW_CLIENT_LIMITS = {
  headersTimeout: 9_500,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 500,
};

/** Connections of the dashboard's durable pool, beyond DATABASE_POOL_SIZE. */
const DURABLE_POOL_SIZE = 3;

export interface RunningGateway {
  port: number;
  opsPort: number;
  close(): Promise<void>;
}

export async function startGateway(config: GatewayConfig, logger?: Logger): Promise<RunningGateway> {
  const log = logger ?? createLogger({ service: 'gateway' }, config.LOG_LEVEL);
  // The API's path writes only rate-limit counters and usage tallies: a Postgres crash may lose their last few hundred
  // milliseconds, and no request waits for a WAL flush (the limiter's upsert runs on every request).
  const sql = connectDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_SIZE,
    applicationName: 'gateway',
    synchronousCommit: false,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
  });
  // The dashboard's writes are another matter: a revoked key, an ended session, a changed user or setting, a counted
  // sign-in failure must not come back after a crash once answered. They commit durably, on a small pool of their
  // own (the dashboard's traffic is a person's clicks, not the API's).
  const durableSql = connectDatabase(config.DATABASE_URL, {
    max: DURABLE_POOL_SIZE,
    applicationName: 'gateway-dashboard',
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
  });
  // Request errors become UNAVAILABLE without being looked at: no stack capture per request.
  const nc = await connectNats(config.NATS_URL, 'gateway', { noAsyncTraces: true, ...natsCredentials(config) });
  const requester = createRequester(nc);
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'gateway' });
  collectDefaultMetrics({ register: registry });
  const readiness = trackReadiness(sql, nc);
  const usage = createUsageRecorder(sql, log);
  const app = createApp({
    config,
    sql,
    nc,
    log,
    registry,
    ready: readiness.ready,
    recordUsage: usage.record,
    requester,
    durableSql,
  });
  const idempotencyPurge = startIdempotencyPurge(sql, log);
  const signinPurge = startSigninFailurePurge(durableSql, log);
  const renewals = startBillingRenewals(renewalDeps(durableSql, requester, config, log));
  const ops = await startOpsServer({ port: config.OPS_PORT, registry, ready: readiness.ready });

  const server: Server = createServer(SLOW_CLIENT_LIMITS, app);
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  // While draining, answers say Connection: close, so that keep-alive clients let go of their sockets: otherwise
  // server.close() would wait for them (up to keepAliveTimeout) after the last request in flight has finished.
  let draining = false;
  const unanswered = new Set<ServerResponse>();
  // Made once, not per request (shared/src/unnest.ts says why); `this` is the response.
  function answered(this: ServerResponse) {
    unanswered.delete(this);
  }
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    unanswered.add(res);
    res.once('close', answered);
  });
  const port = (server.address() as AddressInfo).port;
  log.info('listening', { port, ops_port: ops.port });

  return {
    port,
    opsPort: ops.port,
    async close() {
      // Stop accepting, let in-flight requests finish (idle keep-alive sockets are closed), then disconnect.
      draining = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await usage.stop();
      await idempotencyPurge.stop();
      await signinPurge.stop();
      await renewals.stop();
      readiness.stop();
      await ops.close();
      requester.close();
      await nc.drain().catch(() => {});
      await sql.end({ timeout: 5 }).catch((err: unknown) => log.warn('closing the database pool failed', { err }));
      await durableSql
        .end({ timeout: 5 })
        .catch((err: unknown) => log.warn('closing the durable database pool failed', { err }));
      log.info('stopped');
    },
  };
}
