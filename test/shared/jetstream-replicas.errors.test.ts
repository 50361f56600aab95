import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { CommonConfig, ConfigError, loadConfig, TopologyConfig } from '@platform/shared/config';
import { jetStreamReplicas } from '@platform/shared/jetstream-replicas';
import { connectNats } from '@platform/shared/nats';
import { createTestNats, NATS_URL } from '../helpers/platform.ts';

// JETSTREAM_REPLICAS and NATS_URL's seed list are checked at start, naming the variable; against the suite's
// single nats-server `auto` asks for one replica, which is what a non-clustered server accepts.

const refusal = (schema: Parameters<typeof loadConfig>[0], env: Record<string, string>) => {
  try {
    loadConfig(schema, env);
    return null;
  } catch (err) {
    return err;
  }
};

t.test('JETSTREAM_REPLICAS takes auto, 1, 3 or 5 only', async (t) => {
  for (const value of ['auto', '1', '3', '5'])
    t.equal(loadConfig(TopologyConfig, { JETSTREAM_REPLICAS: value }).JETSTREAM_REPLICAS, value, `${value} accepted`);
  t.equal(loadConfig(TopologyConfig, {}).JETSTREAM_REPLICAS, 'auto', 'auto by default');
  for (const value of ['0', '2', '4', '7', 'three', 'AUTO', '-1', '3.0']) {
    const err = refusal(TopologyConfig, { JETSTREAM_REPLICAS: value });
    t.type(err, ConfigError, `${value} refused`);
    t.equal((err as ConfigError).variable, 'JETSTREAM_REPLICAS', 'naming the variable');
    t.match((err as Error).message, /^configuration: JETSTREAM_REPLICAS /);
  }
});

t.test('NATS_URL takes a comma-separated list of nats, tls, ws or wss servers', async (t) => {
  for (const value of [
    'nats://127.0.0.1:4222',
    'nats://a:4222,nats://b:4222,nats://c:4222',
    'tls://a:4222, tls://b:4222',
    'ws://a:8080,wss://b:443',
  ])
    t.equal(loadConfig(CommonConfig, { NATS_URL: value }).NATS_URL, value, `${value} accepted`);
  for (const value of [
    'http://a:4222',
    'nats://a:4222,http://b:4222',
    'nats://a:4222,',
    'nats://a:4222,,nats://b:4222',
    'a:4222',
    'nats://',
  ]) {
    const err = refusal(CommonConfig, { NATS_URL: value });
    t.type(err, ConfigError, `${value} refused`);
    t.equal((err as ConfigError).variable, 'NATS_URL', 'naming the variable');
  }
});

t.test('against a single server, auto gives 1 and the streams get one replica', async (t) => {
  const nc = await connectNats(NATS_URL, 'replicas-test');
  t.teardown(() => nc.close());
  t.equal(jetStreamReplicas(nc, 'auto')(), 1, 'auto: 1');
  t.equal(jetStreamReplicas(nc, '3')(), 3, 'a number is taken as given');

  const { prefix } = await createTestNats(t);
  const jsm = await jetstreamManager(nc);
  for await (const s of jsm.streams.list())
    if (s.config.name.startsWith(`${prefix.toUpperCase()}_`)) t.equal(s.config.num_replicas, 1, `${s.config.name}: 1`);
});

t.test('a seed list connects through whichever server answers', async (t) => {
  // The first seed has nobody listening: the client moves on to the next.
  const nc = await connectNats(`nats://127.0.0.1:1, ${NATS_URL}`, 'seeds-test');
  t.teardown(() => nc.close());
  t.ok(nc.info?.server_id, 'connected');
});
