import t from 'tap';
import { connect } from '@nats-io/transport-node';
import { connectNats, natsCredentials } from '@platform/shared/nats';
import { renderChart, validateObject, type K8sObject } from '../helpers/helm.ts';
import { createTestTls } from '../helpers/locked-nats.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

/**
 * TLS on the bundled NATS's client port from one Secret (nats.config.nats.tls): the NATS chart's servers get its
 * certificate and key, nats-box the CA, and every service of the platform the CA alone (never the servers' key) and
 * NATS_TLS_CA. The rendered `tls` block and the services' variables are tried on a real nats-server with certificates
 * made here; with TLS off nothing of it is rendered.
 */
t.setTimeout(120_000);

type Env = { name: string; value?: string };
type Volume = { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] } };
type Mount = { name: string; mountPath: string };
const base = { 'secrets.databaseUrl': 'postgres://affiliate@postgres:5432/affiliate', 'nats.enabled': 'true' };
const tlsOn = { ...base, 'nats.config.nats.tls.enabled': 'true', 'nats.config.nats.tls.secretName': 'nats-server-tls' };
const platformDeployments = (objects: K8sObject[]) =>
  objects.filter(
    (o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/name'] === 'affiliate-platform',
  );
const envOf = (d: K8sObject) =>
  new Map((d.spec.template.spec.containers[0].env as Env[]).map((e) => [e.name, e.value]));
const natsConf = (objects: K8sObject[]) =>
  objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'aff-nats-config')!.data!['nats.conf']!;
const decode = (secret: K8sObject, key: string) => Buffer.from(secret.data![key]!, 'base64').toString('utf8');
const natsBoxContext = (objects: K8sObject[]) =>
  JSON.parse(
    (
      objects.find((o) => o.metadata.name === 'aff-nats-box-contexts') as unknown as {
        stringData: Record<string, string>;
      }
    ).stringData['default.json']!,
  ) as Record<string, string>;

t.test('TLS on: the servers take the certificate of the Secret, every service and nats-box its CA', async (t) => {
  const objects = await renderChart(t, { withNats: true, set: tlsOn });
  for (const object of objects)
    await t.resolves(validateObject(object), `${object.kind} ${object.metadata.name} is valid Kubernetes`);
  const conf = natsConf(objects);
  t.match(conf, /"cert_file": "\/etc\/nats-certs\/nats\/tls\.crt"/, 'the servers’ certificate');
  t.match(conf, /"key_file": "\/etc\/nats-certs\/nats\/tls\.key"/, 'and its key');
  const servers = objects.find((o) => o.kind === 'StatefulSet')!.spec.template.spec;
  const nats = servers.containers.find((c: { name: string }) => c.name === 'nats');
  const mount = (nats.volumeMounts as Mount[]).find((m) => m.mountPath === '/etc/nats-certs/nats');
  t.same(
    (servers.volumes as Volume[]).find((v) => v.name === mount?.name)?.secret,
    { secretName: 'nats-server-tls' },
    'the NATS container mounts the Secret where the configuration looks for it',
  );

  const deployments = platformDeployments(objects);
  t.equal(deployments.length, 6, 'every service');
  for (const d of deployments) {
    const name = d.metadata.labels!['app.kubernetes.io/component']!;
    const env = envOf(d);
    t.equal(env.get('NATS_TLS_CA'), '/etc/nats-tls/ca.crt', `${name}: NATS_TLS_CA`);
    t.notOk(env.has('NATS_TLS_CERT') || env.has('NATS_TLS_KEY'), `${name}: no client certificate asked for`);
    const pod = d.spec.template.spec;
    const volume = (pod.volumes as Volume[]).find((v) => v.name === 'nats-tls');
    t.same(
      volume?.secret,
      { secretName: 'nats-server-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
      `${name}: the CA of the servers' Secret, and no more (their private key stays out)`,
    );
    t.ok(
      (pod.containers[0].volumeMounts as Mount[]).some((m) => m.name === 'nats-tls' && m.mountPath === '/etc/nats-tls'),
      `${name}: mounted where NATS_TLS_CA points`,
    );
  }
  t.equal(natsBoxContext(objects)['ca'], '/etc/nats-ca-cert/ca.crt', 'nats-box checks the servers against the CA');
  const box = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'aff-nats-box')!.spec.template.spec;
  t.ok(
    (box.volumes as Volume[]).some((v) => v.secret?.secretName === 'nats-server-tls'),
    'nats-box mounts the CA',
  );
});

t.test('TLS on: the rendered tls block on a real server admits a service with its variables only', async (t) => {
  const objects = await renderChart(t, { withNats: true, set: tlsOn });
  const tls = createTestTls(t);
  // The rendered block with the pods' paths swapped for this test's files.
  const block = /"tls": (\{[^}]*\})/.exec(natsConf(objects))![1]!;
  const files: Record<string, string> = {
    '/etc/nats-certs/nats/tls.crt': tls.serverCert,
    '/etc/nats-certs/nats/tls.key': tls.serverKey,
    '/etc/nats-ca-cert/ca.crt': tls.ca,
  };
  const local = block.replace(/"(\/etc\/[^"]+)"/g, (_, path: string) => JSON.stringify(files[path] ?? path));
  t.notMatch(local, /\/etc\//, 'every file of the block is one the chart mounts');
  const auth = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'aff-nats-auth')!;
  const server = await startNatsServer(t, { config: `tls: ${local}\n${decode(auth, 'auth.conf')}` });

  const gateway = platformDeployments(objects).find((d) => d.metadata.name.endsWith('-gateway'))!;
  const env = envOf(gateway);
  const credentials = natsCredentials({
    NATS_USER: env.get('NATS_USER'),
    NATS_PASSWORD: decode(auth, 'gateway'),
    NATS_TLS_CA: env.get('NATS_TLS_CA') === '/etc/nats-tls/ca.crt' ? tls.ca : 'not the mounted CA',
  });
  const nc = await connectNats(server.url.replace('127.0.0.1', 'localhost'), 'gateway', credentials);
  t.teardown(() => nc.close());
  t.ok(nc.info?.tls_required, 'the gateway is connected over TLS');
  await t.rejects(
    connect({ servers: server.url, user: credentials.user!, pass: credentials.pass!, reconnect: false }),
    'a client that does not trust the CA is refused',
  );
});

t.test('TLS off: no tls block, CA, mount or variable anywhere', async (t) => {
  const objects = await renderChart(t, { withNats: true, set: base });
  t.notMatch(natsConf(objects), /"tls"|cert_file|ca_file/, 'the servers take plain connections');
  for (const d of platformDeployments(objects)) {
    const env = envOf(d);
    t.notOk(
      ['NATS_TLS_CA', 'NATS_TLS_CERT', 'NATS_TLS_KEY'].some((name) => env.has(name)),
      `${d.metadata.name}: no TLS variable`,
    );
    t.notOk(
      (d.spec.template.spec.volumes as Volume[]).some((v) => v.name === 'nats-tls'),
      `${d.metadata.name}: no TLS volume`,
    );
  }
  t.notOk('ca' in natsBoxContext(objects), 'nats-box uses no CA');
  const servers = objects.find((o) => o.kind === 'StatefulSet')!.spec.template.spec;
  t.notOk(
    (servers.volumes as Volume[]).some((v) => v.secret && v.secret.secretName !== 'aff-nats-auth'),
    'the NATS pods mount no Secret but the users’ block',
  );
});

t.test('an external NATS: client TLS from natsTls alone, whatever nats.config says', async (t) => {
  const objects = await renderChart(t, {
    set: {
      'secrets.databaseUrl': base['secrets.databaseUrl'],
      'nats.config.nats.tls.enabled': 'true',
      'nats.config.nats.tls.secretName': 'unused',
    },
  });
  for (const d of platformDeployments(objects)) t.notOk(envOf(d).has('NATS_TLS_CA'), `${d.metadata.name}: plain`);
});

t.test('mutual TLS with the bundled NATS: natsTls brings the CA and the client certificate', async (t) => {
  const objects = await renderChart(t, {
    withNats: true,
    set: { ...tlsOn, 'natsTls.enabled': 'true', 'natsTls.secretName': 'nats-client-tls' },
  });
  for (const d of platformDeployments(objects)) {
    const env = envOf(d);
    t.equal(env.get('NATS_TLS_CERT'), '/etc/nats-tls/tls.crt', `${d.metadata.name}: its certificate`);
    t.same(
      (d.spec.template.spec.volumes as Volume[]).find((v) => v.name === 'nats-tls')?.secret,
      { secretName: 'nats-client-tls' },
      `${d.metadata.name}: from the client Secret`,
    );
  }
});
