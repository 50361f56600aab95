import t from 'tap';
import type { Asserts } from '../gateway/expect.ts';
import { streamName } from '@platform/shared/catalogue';
import {
  awaitCommissions,
  deleteConsumer,
  deleteStreams,
  levelZeroCounts,
  outboxIds,
  postEvents,
  receivedIds,
  startFullStack,
  type FullStack,
} from '../helpers/full-stack.ts';
import { eventually, sleep } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

// JetStream can lose its streams or consumers under running services (a NATS restart on lost storage, a rebuilt
// cluster, an operator's delete). Every service recreates them (the topology check, and at once when a publish or
// a pull finds one gone), with no restart, and work written afterwards flows within the recovery time
// docs/ARCHITECTURE.md states for it: 10 s by default.
t.setTimeout(150_000);
const RECOVERY_MS = 10_000;
// Past the readiness probe's interval, with room for a loaded machine.
const READY_WITHIN_MS = 10_000;

const nats = await startNatsServer(t);
// The dispatcher's horizons at their defaults: what flows here flows through the recreated streams, not the reconcilers.
const stack = await startFullStack(t, {
  natsUrl: nats.url,
  env: { WEBHOOK_RECONCILE_AFTER_MS: '60000', WEBHOOK_REQUEUE_AFTER_MS: '30000' },
});

/** 20 affiliates and 50 events through the API (all 201), then every commission and webhook within RECOVERY_MS. */
async function writeAndAwaitEverything(t: Asserts & { comment(...m: unknown[]): void }, stack: FullStack, tag: string) {
  const started = Date.now();
  const affiliates = [];
  for (let i = 0; i < 20; i++)
    affiliates.push(await stack.merchant.client.post('/api/v1/affiliates', { email: `${tag}-${i}@example.com` }));
  t.same(
    affiliates.map((r) => r.status),
    Array(20).fill(201),
    '20 affiliates created',
  );
  const events = await postEvents(stack.merchant.client, tag, 50);
  t.same(
    events.map((r) => r.status),
    Array(50).fill(201),
    '50 events recorded',
  );
  const orders = Array.from({ length: 50 }, (_, i) => `${tag}-${i}`);

  const took = await awaitCommissions(stack.platform.sql, stack.merchant.id, tag, orders, RECOVERY_MS + 5_000).catch(
    async (err) => {
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const jsm = await jetstreamManager(stack.platform.nc);
      for await (const s of jsm.streams.list())
        t.comment(JSON.stringify({ name: s.config.name, state: s.state, created: s.created }));
      for await (const c of jsm.consumers.list(streamName(stack.platform.prefix, 'CONVERSIONS')))
        t.comment(JSON.stringify(c));
      for (const [name, lines] of Object.entries(stack.logs))
        t.comment(
          `${name}:\n${lines
            .filter((l) => /"level":"(info|warn|error)"/.test(l))
            .slice(-15)
            .join('\n')}`,
        );
      throw err;
    },
  );
  t.ok(
    Date.now() - started <= RECOVERY_MS,
    `every commission within ${RECOVERY_MS} ms of the first write (${Date.now() - started} ms; waited ${took} ms after the last)`,
  );
  const counts = await levelZeroCounts(stack.platform.sql, stack.merchant.id, tag);
  t.same(
    [...counts.values()].filter((n) => n !== 1),
    [],
    'exactly one level-0 commission per event',
  );

  const affiliateMessages = await outboxIds(stack.platform.sql, stack.merchant.id, 'affiliate.created', tag);
  const commissionMessages = await outboxIds(stack.platform.sql, stack.merchant.id, 'commission.created', tag);
  t.equal(affiliateMessages.length, 20, 'an affiliate.created per affiliate');
  t.equal(commissionMessages.length, 50, 'a commission.created per commission');
  await eventually(
    async () => {
      const missingAffiliates = affiliateMessages.filter((id) => !receivedIds(stack, 'affiliate.created').has(id));
      const missingCommissions = commissionMessages.filter((id) => !receivedIds(stack, 'commission.created').has(id));
      return missingAffiliates.length + missingCommissions.length === 0 ? true : undefined;
    },
    RECOVERY_MS + 5_000,
    'every webhook',
  );
  t.ok(
    Date.now() - started <= RECOVERY_MS,
    `every webhook within ${RECOVERY_MS} ms of the first write (${Date.now() - started} ms)`,
  );
}

/** Readiness is a periodic check: once the flow works, each service reports ready by its next one. */
async function assertEveryServiceReady(t: Asserts) {
  for (const [name, service] of Object.entries(stack.services)) {
    const ready = async () => (await fetch(`http://127.0.0.1:${service.opsPort}/readyz`)).status === 200;
    const started = Date.now();
    while (!(await ready()) && Date.now() - started < READY_WITHIN_MS) await sleep(100);
    t.ok(await ready(), `${name} is ready`);
  }
}

t.test('before any fault, the flow works (so the tests below fail for the fault, not the setup)', async (t) => {
  await writeAndAwaitEverything(t, stack, 'before');
});

t.test('every stream deleted while the services run: recreated, and everything written afterwards flows', async (t) => {
  const deleted = await deleteStreams(stack.platform);
  const names = ['CONVERSIONS', 'DOMAIN_EVENTS', 'WEBHOOK_ATTEMPTS'].map((s) =>
    streamName(stack.platform.prefix, s as 'CONVERSIONS'),
  );
  t.same(deleted, names, 'the three streams were deleted');
  await writeAndAwaitEverything(t, stack, 'streams');
  await assertEveryServiceReady(t);
  t.ok(
    stack.logs.commissions.some((l) => /consumer was missing; recreated/.test(l)) ||
      stack.logs.dispatcher.some((l) => /recreated/.test(l)),
    'a recreation was logged',
  );
});

t.test('only the consumers deleted: recreated, and everything written afterwards flows', async (t) => {
  const prefix = stack.platform.prefix;
  await deleteConsumer(stack.platform, streamName(prefix, 'CONVERSIONS'), 'commissions');
  await deleteConsumer(stack.platform, streamName(prefix, 'DOMAIN_EVENTS'), 'dispatcher');
  await deleteConsumer(stack.platform, streamName(prefix, 'WEBHOOK_ATTEMPTS'), 'dispatcher-attempts');
  await writeAndAwaitEverything(t, stack, 'consumers');
  await assertEveryServiceReady(t);
});
