import { randomBytes } from 'node:crypto';
import t from 'tap';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { rpcSubject, streamName } from '@platform/shared/catalogue';
import { connectNats, ensureStreams } from '@platform/shared/nats';
import { renderChart, type K8sObject } from '../helpers/helm.ts';
import { startNatsServer } from '../helpers/nats-server.ts';
import { sleep } from '../helpers/platform.ts';

/**
 * The NATS chart's nats-box (an operator's shell) and its helm test pod, once the bundled NATS admits users only: both
 * connect as the user `nats-box` of the chart's authorization block, with the password of the Secret's key `nats-box`
 * and replies under `_INBOX.nats-box.` (the contexts Secret). On a real server with the rendered block that user does
 * what the helm test does (a request and its reply on `echo`) and reads the streams' information, and reaches nothing
 * of the platform's; with nats-box off the user is gone too.
 */
t.setTimeout(120_000);

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
const base = { 'secrets.databaseUrl': 'postgres://affiliate@postgres:5432/affiliate', 'nats.enabled': 'true' };
const decode = (secret: K8sObject, key: string) => Buffer.from(secret.data![key]!, 'base64').toString('utf8');
const authSecret = (objects: K8sObject[]) =>
  objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'aff-nats-auth')!;
const boxPods = (objects: K8sObject[]) =>
  objects.flatMap((o) => {
    if (o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === 'nats-box')
      return [{ name: `Deployment ${o.metadata.name}`, spec: o.spec.template.spec }];
    if (o.kind === 'Pod') return [{ name: `Pod ${o.metadata.name}`, spec: o.spec }];
    return [];
  });

t.test('nats-box and the helm test pod connect as the user nats-box, with its password', async (t) => {
  const objects = await renderChart(t, { withNats: true, set: base });
  const pods = boxPods(objects);
  t.same(
    pods.map((p) => p.name),
    ['Deployment aff-nats-box', 'Pod aff-nats-test-request-reply'],
    'the shell and the helm test',
  );
  const secret = authSecret(objects);
  t.match(decode(secret, 'auth.conf'), /user: "nats-box"/, 'a user of the authorization block');
  t.ok(decode(secret, 'nats-box').length >= 32, 'with a password of its own');
  for (const pod of pods) {
    const env = new Map((pod.spec.containers[0].env as Env[]).map((e) => [e.name, e]));
    t.equal(env.get('NATS_USER')?.value, 'nats-box', `${pod.name}: NATS_USER`);
    t.same(
      env.get('NATS_PASSWORD')?.valueFrom?.secretKeyRef,
      { name: 'aff-nats-auth', key: 'nats-box' },
      `${pod.name}: NATS_PASSWORD from the Secret`,
    );
  }
  const contexts = objects.find((o) => o.metadata.name === 'aff-nats-box-contexts') as unknown as {
    stringData: Record<string, string>;
  };
  t.match(JSON.parse(contexts.stringData['default.json']!), {
    url: 'nats://aff-nats',
    inbox_prefix: '_INBOX.nats-box',
  });
});

t.test('on the rendered block, nats-box runs the helm test and reads JetStream, and no more', async (t) => {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const objects = await renderChart(t, { withNats: true, set: { ...base, 'commonEnv.NATS_PREFIX': prefix } });
  const secret = authSecret(objects);
  const server = await startNatsServer(t, { config: decode(secret, 'auth.conf') });
  const as = async (client: string) => {
    const nc = await connectNats(server.url, client, { user: `${prefix}-${client}`, pass: decode(secret, client) });
    t.teardown(() => nc.close());
    return nc;
  };
  const box: NatsConnection = await connect({
    servers: server.url,
    user: 'nats-box',
    pass: decode(secret, 'nats-box'),
    inboxPrefix: '_INBOX.nats-box',
    reconnect: false,
  });
  t.teardown(() => box.close());

  // The helm test: `nats reply --echo echo` and `nats request echo hi`, both as nats-box.
  box.subscribe('echo', { queue: 'NATS-RPLY-22', callback: (_, msg) => void msg.respond(msg.data) });
  t.equal((await box.request('echo', 'hi', { timeout: 2000 })).string(), 'hi', 'the helm test’s request is answered');

  // A service made the streams; nats-box lists and reads them, and cannot change them.
  await ensureStreams(await as('affiliates'), prefix);
  const jsm = await jetstreamManager(box);
  const names: string[] = [];
  for await (const name of jsm.streams.names()) names.push(name);
  t.ok(names.includes(streamName(prefix, 'DOMAIN_EVENTS')), 'stream names');
  t.equal((await jsm.streams.info(streamName(prefix, 'CONVERSIONS'))).config.name, streamName(prefix, 'CONVERSIONS'));
  await t.rejects(jsm.streams.delete(streamName(prefix, 'CONVERSIONS')), 'no stream deleted');
  await t.rejects(jsm.streams.add({ name: 'BOX', subjects: ['box.>'] }), 'no stream made');

  // The platform's requests: neither read nor sent by nats-box.
  const payments = await as('payments');
  let paymentsGot = 0;
  let boxGot = 0;
  payments.subscribe(rpcSubject(prefix, 'payments', '*'), { callback: () => void paymentsGot++ });
  // A refused subscription calls back with the server's permissions error, never with a message.
  const boxCallback = (err: Error | null) => void (err ? undefined : boxGot++);
  box.subscribe(rpcSubject(prefix, 'payments', '*'), { callback: boxCallback });
  box.subscribe(`_INBOX.${prefix}-gateway.>`, { callback: boxCallback });
  await payments.flush();
  await box.flush().catch(() => {});
  box.publish(rpcSubject(prefix, 'payments', 'create_payout'), 'x');
  await box.flush().catch(() => {});
  const gateway = await as('gateway');
  gateway.publish(rpcSubject(prefix, 'payments', 'create_payout'), 'x', { reply: `_INBOX.${prefix}-gateway.1` });
  await gateway.flush();
  await sleep(200);
  t.equal(paymentsGot, 1, 'the gateway’s request reaches payments, nats-box’s does not');
  t.equal(boxGot, 0, 'nats-box reads neither the request nor the gateway’s inbox');
});

t.test('nats-box off: no pod, no test, no user', async (t) => {
  const objects = await renderChart(t, { withNats: true, set: { ...base, 'nats.natsBox.enabled': 'false' } });
  t.same(boxPods(objects), [], 'neither nats-box nor its helm test');
  const secret = authSecret(objects);
  t.notOk('nats-box' in secret.data!, 'no password');
  t.notMatch(decode(secret, 'auth.conf'), /nats-box/, 'no user');
});
