import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { PLATFORM_PAYOUT_SUBJECTS, rpcSubject } from '@platform/shared/catalogue';
import { NATS_CLIENTS } from '@platform/shared/nats-access';
import { CHART_PERMISSIONS_FILE, chartPermissionsJson } from '../../scripts/nats-config.ts';
import { renderChart, type K8sObject } from '../helpers/helm.ts';
import { startNatsServer } from '../helpers/nats-server.ts';
import { sleep } from '../helpers/platform.ts';

/**
 * The chart's NATS users: the permissions it renders are the catalogue's (files/nats-permissions.json, kept by
 * `npm run nats:config -- --chart`); with the bundled NATS, its Secret's authorization block is what the NATS chart
 * includes, and a real nats-server started with it admits each service with the password its Deployment gets, and
 * holds the gateway to its subjects; with an external NATS the services take their passwords from a named Secret;
 * with client TLS, the CA and certificate from a Secret.
 */
t.setTimeout(120_000);

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
const envOf = (d: K8sObject) => new Map((d.spec.template.spec.containers[0].env as Env[]).map((e) => [e.name, e]));
/** The platform's Deployments (not the NATS chart's nats-box). */
const deployments = (objects: K8sObject[]) =>
  objects.filter(
    (o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/name'] === 'affiliate-platform',
  );
const serviceOf = (d: K8sObject) => d.metadata.labels!['app.kubernetes.io/component']!;
const base = { 'secrets.databaseUrl': 'postgres://affiliate@postgres:5432/affiliate' };

t.test('the permissions the chart renders are the catalogue’s', async (t) => {
  t.equal(readFileSync(CHART_PERMISSIONS_FILE, 'utf8'), chartPermissionsJson(), 'run `npm run nats:config -- --chart`');
});

t.test('with the bundled NATS, each service is a user of the server the chart configures', async (t) => {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const objects = await renderChart(t, {
    withNats: true,
    set: { ...base, 'nats.enabled': 'true', 'commonEnv.NATS_PREFIX': prefix },
  });
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'aff-nats-auth')!;
  t.ok(secret, 'the Secret aff-nats-auth');
  const data = (key: string) => Buffer.from(secret.data![key]!, 'base64').toString('utf8');

  const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'aff-nats-config')!;
  t.match(config.data!['nats.conf'], /include \.\.\/nats-auth\/auth\.conf;/, 'nats.conf includes the block');
  const statefulSet = objects.find((o) => o.kind === 'StatefulSet')!;
  const pod = statefulSet.spec.template.spec;
  t.ok(
    pod.volumes.some(
      (v: { name: string; secret?: { secretName: string } }) => v.secret?.secretName === 'aff-nats-auth',
    ),
    'the NATS pods mount the Secret',
  );
  for (const container of pod.containers.filter((c: { name: string }) => ['nats', 'reloader'].includes(c.name)))
    t.ok(
      container.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/etc/nats-auth'),
      `${container.name} sees /etc/nats-auth`,
    );

  for (const d of deployments(objects)) {
    const env = envOf(d);
    const service = serviceOf(d);
    t.equal(env.get('NATS_USER')?.value, `${prefix}-${service}`, `${service}'s user`);
    t.same(env.get('NATS_PASSWORD')?.valueFrom?.secretKeyRef, { name: 'aff-nats-auth', key: service });
  }

  // The rendered block on a real server: each service gets in with its password, and no further than its subjects.
  const server = await startNatsServer(t, { config: data('auth.conf') });
  const connections = new Map<string, NatsConnection>();
  for (const client of NATS_CLIENTS) {
    const nc = await connect({
      servers: server.url,
      user: `${prefix}-${client}`,
      pass: data(client),
      reconnect: false,
    });
    t.teardown(() => nc.close());
    connections.set(client, nc);
  }
  t.equal(connections.size, NATS_CLIENTS.length, 'every service connects');
  await t.rejects(connect({ servers: server.url, reconnect: false }), /authorization/i, 'no user: refused');
  const payments = connections.get('payments')!;
  let received = 0;
  payments.subscribe(rpcSubject(prefix, 'payments', '*'), {
    callback: () => {
      received++;
    },
  });
  await payments.flush();
  const gateway = connections.get('gateway')!;
  gateway.publish(PLATFORM_PAYOUT_SUBJECTS.pay(prefix), 'x');
  gateway.publish(rpcSubject(prefix, 'payments', 'create_payout'), 'x');
  await gateway.flush().catch(() => {});
  await sleep(200);
  t.equal(received, 1, 'the gateway reaches the payments API, never affiliate_payout');
});

t.test('with an external NATS, the passwords come from the Secret named, or no user is set', async (t) => {
  const named = await renderChart(t, { set: { ...base, 'natsAuth.existingSecret': 'platform-nats-users' } });
  t.notOk(
    named.some((o) => o.metadata.name === 'aff-nats-auth'),
    'no authorization block for a server not ours',
  );
  for (const d of deployments(named))
    t.same(envOf(d).get('NATS_PASSWORD')?.valueFrom?.secretKeyRef, { name: 'platform-nats-users', key: serviceOf(d) });
  const none = await renderChart(t, { set: base });
  for (const d of deployments(none)) t.notOk(envOf(d).has('NATS_USER'), `${serviceOf(d)}: no NATS user`);
});

t.test('client TLS: the CA and the client certificate from a Secret', async (t) => {
  const objects = await renderChart(t, {
    set: { ...base, 'natsTls.enabled': 'true', 'natsTls.secretName': 'nats-client-tls' },
  });
  for (const d of deployments(objects)) {
    const env = envOf(d);
    t.equal(env.get('NATS_TLS_CA')?.value, '/etc/nats-tls/ca.crt');
    t.equal(env.get('NATS_TLS_CERT')?.value, '/etc/nats-tls/tls.crt');
    t.equal(env.get('NATS_TLS_KEY')?.value, '/etc/nats-tls/tls.key');
    const pod = d.spec.template.spec;
    t.ok(pod.volumes.some((v: { secret?: { secretName: string } }) => v.secret?.secretName === 'nats-client-tls'));
    t.ok(pod.containers[0].volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/etc/nats-tls'));
  }
  const caOnly = await renderChart(t, {
    set: {
      ...base,
      'natsTls.enabled': 'true',
      'natsTls.secretName': 'nats-ca',
      'natsTls.clientCertificate': 'false',
    },
  });
  for (const d of deployments(caOnly)) t.notOk(envOf(d).has('NATS_TLS_CERT'), 'no client certificate asked for');
});
