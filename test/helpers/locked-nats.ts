import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { ensureStreams, userInboxPrefix } from '@platform/shared/nats';
import {
  NATS_CLIENTS,
  authorizationBlock,
  natsPermissions,
  natsUserName,
  type NatsClient,
  type NatsUser,
} from '@platform/shared/nats-access';
import type { ServiceRuntime } from '@platform/shared/service';
import { loadAffiliatesConfig } from '@platform/affiliates/config';
import { startAffiliatesService } from '@platform/affiliates/service';
import { loadCommissionsConfig } from '@platform/commissions/config';
import { startCommissionsService } from '@platform/commissions/service';
import { loadDispatcherConfig } from '@platform/dispatcher/config';
import { startDispatcherService } from '@platform/dispatcher/service';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway, type RunningGateway } from '@platform/gateway/service';
import { loadPaymentsConfig } from '@platform/payments/config';
import { startPaymentsService } from '@platform/payments/service';
import { createKey, createMerchant } from '../../scripts/admin/commands.ts';
import { ApiClient } from './client.ts';
import { startNatsServer } from './nats-server.ts';
import { bestEffort, captureLogger, createTestDatabase, TEST_PASSWORD_COST, type TestLike } from './platform.ts';
import { TEST_DISPATCHER_ENV } from './webhooks.ts';

/**
 * A nats-server of the test's own that admits only the platform's users (shared/src/nats-access.ts, as
 * `npm run nats:config` writes them) and a `test` user that may do anything (the test's own connection), over TLS
 * only when asked; and the whole platform on it, every process on its own user.
 */

export interface TestTls {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** A CA, and a server certificate for 127.0.0.1 and a client certificate that it signed (openssl). */
export function createTestTls(t: TestLike): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'nats-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const at = (name: string) => join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const key = ['-newkey', 'rsa:2048', '-nodes'];
  openssl([
    'req',
    '-x509',
    ...key,
    '-days',
    '2',
    '-subj',
    '/CN=test NATS CA',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
  ]);
  const signed = (name: string, extensions: string) => {
    writeFileSync(at(`${name}.ext`), extensions);
    openssl(['req', ...key, '-subj', `/CN=${name}`, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`)]);
    openssl(
      ['x509', '-req', '-in', at(`${name}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key')].concat([
        '-CAcreateserial',
        '-days',
        '2',
        '-out',
        at(`${name}.pem`),
        '-extfile',
        at(`${name}.ext`),
      ]),
    );
  };
  signed('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  signed('client', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
  };
}

const TEST_USER = { user: 'test', pass: randomBytes(12).toString('hex') };

/**
 * The nats-server with the platform's users for `prefix` and, with `tls`, TLS required of every client (mutual:
 * a client certificate signed by the CA too). `admin` is the test's own connection, as the `test` user.
 */
export async function startLockedNats(t: TestLike, opts: { tls?: TestTls } = {}) {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const users: NatsUser[] = NATS_CLIENTS.map((client) => ({
    user: natsUserName(client, prefix),
    password: randomBytes(18).toString('base64url'),
    permissions: natsPermissions(client, prefix),
  }));
  const everything = { publish: { allow: ['>'] }, subscribe: { allow: ['>'] } };
  const all = [...users, { user: TEST_USER.user, password: TEST_USER.pass, permissions: everything }];
  const tls = opts.tls
    ? `tls {\n  cert_file: "${opts.tls.serverCert}"\n  key_file: "${opts.tls.serverKey}"\n  ca_file: "${opts.tls.ca}"\n  verify: true\n}\n`
    : '';
  const server = await startNatsServer(t, { config: authorizationBlock(all) + tls });
  /** What a client of the server needs besides a user: the CA and the client certificate, over TLS. */
  const clientTls: ConnectionOptions['tls'] = opts.tls
    ? { caFile: opts.tls.ca, certFile: opts.tls.clientCert, keyFile: opts.tls.clientKey }
    : undefined;
  const connectAs = (options: ConnectionOptions = {}) =>
    connect({
      servers: server.url,
      timeout: 3000,
      reconnect: false,
      ...(clientTls ? { tls: clientTls } : {}),
      ...options,
    });
  const admin = await connectAs(TEST_USER);
  t.teardown(bestEffort('closing the test connection', () => admin.drain()));
  await ensureStreams(admin, prefix);
  const credentials = Object.fromEntries(users.map((u, i) => [NATS_CLIENTS[i]!, u])) as Record<NatsClient, NatsUser>;
  /** A connection as one process's user, its replies under the user's inbox as the process's are (nats.ts). */
  const connectAsClient = async (client: NatsClient): Promise<NatsConnection> => {
    const { user, password } = credentials[client];
    const nc = await connectAs({ user, pass: password, inboxPrefix: userInboxPrefix(user) });
    t.teardown(bestEffort(`closing ${client}'s test connection`, () => nc.close()));
    return nc;
  };
  return { url: server.url, prefix, admin, credentials, connectAs, connectAsClient };
}

/** Every process of the platform on the locked server, each with its own NATS_USER and NATS_PASSWORD (and TLS). */
export async function startLockedPlatform(t: TestLike, opts: { tls?: TestTls } = {}) {
  const nats = await startLockedNats(t, opts);
  const db = await createTestDatabase(t);
  const base: Record<string, string> = {
    APP_ENV: 'test',
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '3',
    NATS_URL: nats.url,
    NATS_PREFIX: nats.prefix,
    OPS_PORT: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    PASSWORD_HASH_COST: String(TEST_PASSWORD_COST),
    ...(opts.tls
      ? { NATS_TLS_CA: opts.tls.ca, NATS_TLS_CERT: opts.tls.clientCert, NATS_TLS_KEY: opts.tls.clientKey }
      : {}),
  };
  const logs: Record<string, string[]> = {};
  const envOf = (client: NatsClient) => {
    const { user, password } = nats.credentials[client];
    return { ...base, NATS_USER: user, NATS_PASSWORD: password };
  };
  const logOf = (client: NatsClient) => {
    const captured = captureLogger(client);
    logs[client] = captured.lines;
    return captured.log;
  };
  const services: ServiceRuntime[] = [];
  services.push(await startAffiliatesService(loadAffiliatesConfig(envOf('affiliates')), logOf('affiliates')));
  services.push(await startEventsService(loadEventsConfig(envOf('events')), logOf('events')));
  services.push(await startCommissionsService(loadCommissionsConfig(envOf('commissions')), logOf('commissions')));
  services.push(
    await startDispatcherService(
      loadDispatcherConfig({ ...envOf('dispatcher'), ...TEST_DISPATCHER_ENV }),
      logOf('dispatcher'),
    ),
  );
  services.push(await startPaymentsService(loadPaymentsConfig(envOf('payments')), logOf('payments')));
  const gateway: RunningGateway = await startGateway(loadGatewayConfig(envOf('gateway')), logOf('gateway'));
  t.teardown(
    bestEffort('stopping the platform', async () => {
      await gateway.close();
      for (const s of services.reverse()) await s.close();
    }),
  );
  const baseUrl = `http://127.0.0.1:${gateway.port}`;
  return {
    nats,
    sql: db.sql,
    logs,
    baseUrl,
    /** A growth-plan merchant with a read,write key, and a client for it. */
    async merchant() {
      const merchant = await createMerchant(db.sql, `Merchant ${randomBytes(4).toString('hex')}`, 'growth');
      const key = await createKey(db.sql, merchant!['id'], 'read,write');
      return { id: merchant!['id'] as string, client: new ApiClient(baseUrl, key.key) };
    },
  };
}
