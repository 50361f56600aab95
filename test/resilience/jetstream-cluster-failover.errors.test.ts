import t from 'tap';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { COMMISSIONS_CONSUMER, durableConsumerConfig, streamName, type StreamKey } from '@platform/shared/catalogue';
import { createLogger } from '@platform/shared/log';
import { encodeJson, ensureStreams } from '@platform/shared/nats';
import { startTopology } from '@platform/shared/topology';
import { assertProcessedOnce } from '../helpers/burst.ts';
import { levelZeroCounts, outboxIds, receivedIds, startFullStack } from '../helpers/full-stack.ts';
import { startNatsCluster, type ClusterNode } from '../helpers/nats-cluster.ts';
import { eventually, sleep } from '../helpers/platform.ts';
import { allReplicated } from '../helpers/replica-sets.ts';
import { createdGaps, retryUntilAnswered, startSteadyFlow, type FlowCall } from '../helpers/steady-flow.ts';

// A 3-node nats-server cluster with JetStream on loopback (file stores in temporary directories) and every service
// of the platform given all three as seed servers, JETSTREAM_REPLICAS at its default (auto). Every stream and consumer
// gets 3 replicas. Then, under a steady flow of conversion events and new affiliates (both webhook-subscribed): the
// server leading the conversions stream is SIGKILLed and restarted, then another; then all three are restarted one by
// one as a rolling upgrade does. No call answers anything but 201 or 503 with Retry-After, the API answers 201 again
// within 10 s of each stop, every event gets exactly one set of commissions and every webhook is delivered.
t.setTimeout(240_000);

const TAG = 'fo';
/** How long the API may answer no 201 after a server is stopped (the cluster elects new leaders meanwhile). */
const RECOVERY_BOUND_MS = 10_000;
/** How long a killed server stays down: longer than a leader election, so the cluster works without it. */
const DOWN_MS = 3000;

const cluster = await startNatsCluster(t);
const stack = await startFullStack(t, {
  natsUrl: cluster.urls,
  merchant: { plan: 'scale', rateLimit: 60_000 },
  env: { TOPOLOGY_CHECK_INTERVAL_MS: '500' },
});
const { platform } = stack;
const jsm = await jetstreamManager(platform.nc, { checkAPI: false, timeout: 2000 });
const STREAMS = (['CONVERSIONS', 'DOMAIN_EVENTS', 'WEBHOOK_ATTEMPTS'] as StreamKey[]).map((k) =>
  streamName(platform.prefix, k),
);

// A restarted server catches up in seconds; the bound leaves room for a loaded machine.
const whole = (what: string) => allReplicated(jsm, STREAMS, what, { timeoutMs: 60_000 });

const leaderOf = async (stream: string) =>
  eventually(async () => (await jsm.streams.info(stream).catch(() => null))?.cluster?.leader, 10_000, 'a leader');

t.test('every stream and consumer has 3 replicas', async (t) => {
  const sets = await whole('3 replicas of every stream and consumer');
  t.ok(
    sets.some((s) => s.name.endsWith('/commissions')),
    'the commissions consumer is among them',
  );
  t.ok(
    sets.some((s) => s.name.endsWith('/dispatcher')),
    "the dispatcher's consumer is among them",
  );
  for (const s of sets) t.equal(s.replicas, 3, `${s.name}: 3 replicas, on 3 servers, every one current`);
});

t.test('streams and a consumer on one server are scaled up in place by the topology check', async (t) => {
  // As an earlier version of the platform left them: every stream on one server, and the commissions consumer, also on
  // one, part way through its stream. A prefix of their own, so that no service of the stack works on them.
  const prefix = `${platform.prefix}up`;
  const streams = (['CONVERSIONS', 'DOMAIN_EVENTS', 'WEBHOOK_ATTEMPTS'] as StreamKey[]).map((k) =>
    streamName(prefix, k),
  );
  t.teardown(async () => {
    for (const name of streams) await jsm.streams.delete(name).catch(() => {});
  });
  await ensureStreams(platform.nc, prefix, 1);
  const conversions = streamName(prefix, 'CONVERSIONS');
  const js = jetstream(platform.nc);
  for (let i = 0; i < 5; i++) await js.publish(`${prefix}.conversion.recorded`, encodeJson({ i }));
  await jsm.consumers.add(conversions, durableConsumerConfig(prefix, COMMISSIONS_CONSUMER, 1));
  const pulled = await (await js.consumers.get(conversions, 'commissions')).fetch({ max_messages: 3, expires: 2000 });
  for await (const m of pulled) await m.ackAck();
  await allReplicated(jsm, streams, 'everything on one server', { replicas: 1 });
  const before = await jsm.streams.info(conversions);

  const topology = startTopology({
    nc: platform.nc,
    prefix,
    consumers: [{ entry: COMMISSIONS_CONSUMER, resumeWindowMs: 60_000 }],
    intervalMs: 60_000,
    replicas: () => 3,
    log: createLogger({ service: 'topology-test' }, 'silent'),
    registry: new Registry(),
  });
  t.teardown(() => topology.stop());
  await topology.check();
  const sets = await allReplicated(jsm, streams, 'every stream and the consumer on 3 servers');
  t.same(
    sets.map((s) => `${s.name} ${s.replicas}`).sort(),
    [...streams.map((s) => `${s} 3`), `${conversions}/commissions 3`].sort(),
    'every stream and the consumer: 3 replicas, every one current',
  );
  const after = await jsm.streams.info(conversions);
  t.equal(after.created, before.created, 'the same stream, not a new one');
  t.equal(after.state.last_seq, 5, 'with every message it had');
  const consumer = await jsm.consumers.info(conversions, 'commissions');
  t.equal(consumer.ack_floor.stream_seq, 3, 'the consumer where it was: the first 3 acknowledged');
  t.equal(consumer.num_pending, 2, 'and 2 left to deliver');
});

t.test('servers killed and restarted, then a rolling restart, under a steady flow', async (t) => {
  const conversions = streamName(platform.prefix, 'CONVERSIONS');
  const stops: { what: string; at: number }[] = [];
  const stopNode = async (node: ClusterNode, how: 'kill' | 'stop', why: string) => {
    stops.push({ what: `${how === 'kill' ? 'SIGKILL' : 'SIGTERM'} ${node.name} (${why})`, at: Date.now() });
    await (how === 'kill' ? node.kill() : node.stop());
  };
  /** Starts the node again and waits until every stream and consumer has its 3 replicas caught up. */
  const restart = async (node: ClusterNode) => {
    const started = Date.now();
    await node.start();
    await whole(`the cluster whole again after ${node.name} restarted`);
    t.comment(`${node.name} restarted; every replica caught up ${Date.now() - started} ms later`);
  };
  const flow = startSteadyFlow(stack, TAG, { everyMs: 50, affiliateEvery: 10 });
  // A scenario that fails half-way stops the flow too, before the services are closed under it.
  t.teardown(() => flow.stop());
  await sleep(2000);

  const first = cluster.node(await leaderOf(conversions));
  await stopNode(first, 'kill', 'leader of the conversions stream');
  await sleep(DOWN_MS);
  await restart(first);

  const leaderNow = await leaderOf(conversions);
  const second = leaderNow !== first.name ? cluster.node(leaderNow) : cluster.nodes.find((n) => n !== first)!;
  await stopNode(second, 'kill', leaderNow === second.name ? 'the new leader of the conversions stream' : 'another');
  await sleep(DOWN_MS);
  await restart(second);

  for (const node of cluster.nodes) {
    await stopNode(node, 'stop', 'rolling restart');
    await restart(node);
  }
  await sleep(2000);
  const calls = await flow.stop();

  const events = calls.filter((c) => c.kind === 'event');
  const statuses = countBy(calls.map((c) => `${c.kind} ${c.response.status}`));
  t.comment(`answers: ${JSON.stringify(statuses)}`);
  const others = calls.filter((c) => c.response.status !== 201 && c.response.status !== 503);
  t.same(others.map(describe), [], 'every call answered 201 or 503, never 500');
  const unavailable = calls.filter((c) => c.response.status === 503);
  t.comment(`503 answers said: ${JSON.stringify(countBy(unavailable.map((c) => c.response.text.slice(0, 160))))}`);
  t.same(
    unavailable.filter((c) => !/^\d+$/.test(c.response.headers.get('retry-after') ?? '')).map(describe),
    [],
    'every 503 with Retry-After',
  );

  const gaps = createdGaps(calls);
  for (const stop of stops) {
    const recovery = gaps.recoveryMs(stop.at);
    t.comment(`${stop.what}: 201 again after ${recovery} ms`);
    t.ok(recovery <= RECOVERY_BOUND_MS, `201 again within ${RECOVERY_BOUND_MS / 1000} s of ${stop.what}`);
  }

  // The calls told to retry, retried as a client would: each then recorded (201), or found recorded (200).
  const retried = await Promise.all(unavailable.map((c) => retryUntilAnswered(stack, TAG, c)));
  t.same(
    retried.filter((s) => s !== 200 && s !== 201),
    [],
    `every retried call answered 200 or 201 (${retried.length} retried)`,
  );

  const accepted = events.length;
  try {
    await assertProcessedOnce(t, stack, TAG, accepted);
    const affiliateMessages = await outboxIds(platform.sql, stack.merchant.id, 'affiliate.created', TAG);
    t.equal(affiliateMessages.length, calls.length - accepted, 'one affiliate.created for each affiliate');
    await eventually(
      async () => (affiliateMessages.every((id) => receivedIds(stack, 'affiliate.created').has(id)) ? true : undefined),
      30_000,
      'every affiliate.created webhook',
    );
    t.pass('every affiliate.created webhook delivered');
  } finally {
    const counts = await levelZeroCounts(platform.sql, stack.merchant.id, TAG);
    const lost = events.filter((c) => !counts.has(`${TAG}-${c.index}`)).length;
    const doubled = [...counts.values()].filter((n) => n > 1).length;
    const figures =
      `failover figures: events sent ${events.length}, answered 503 then retried ${retried.length}, ` +
      `lost ${lost}, doubled ${doubled}; longest gap between 201s ${gaps.longestMs} ms; ` +
      `webhooks received ${stack.receiver.received.length}`;
    console.log(figures);
    t.comment(figures);
  }
});

const describe = (c: FlowCall) => `${c.kind} ${c.index}: ${c.response.status} ${c.response.text.slice(0, 200)}`;

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
