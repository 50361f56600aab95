import t from 'tap';
import type { Asserts } from '../gateway/expect.ts';
import { outboxIds, postEvents, startFullStack } from '../helpers/full-stack.ts';
import { eventually } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

// docs/ARCHITECTURE.md's recovery time for what no stream holds ("Recovery when JetStream loses streams or
// consumers"): anything a lost stream held, or that no stream took, is processed from the outbox by the reconcilers within
// CONVERSION_RECONCILE_AFTER_MS / WEBHOOK_RECONCILE_AFTER_MS plus one pass, a pass running every half of it and at
// least every 10 s: 60 s + 10 s = 70 s with the defaults. The defaults would make this file take minutes, so both
// horizons are shortened here to 4 s, and the bound becomes 4 s + 2 s; the same code computes both.
// Every outbox relay is stopped first, so that nothing written afterwards reaches a stream: every conversion, every
// commission.created and every affiliate.created can flow only through the reconcilers, and each must do so no
// sooner than the horizon (it went through the reconciler) and no later than the stated bound, measured from the
// outbox row's commit to the commission's (conversions) or to the webhook's arrival (webhooks). The 10 s bound for
// what is written while a stream or consumer is missing is test/resilience/streams-lost.errors.test.ts's, at the defaults.
t.setTimeout(120_000);
const HORIZON_MS = 4000;
const PASS_MS = Math.min(HORIZON_MS / 2, 10_000);
const BOUND_MS = HORIZON_MS + PASS_MS;
/** A pass's own work (each conversion's transaction, a webhook's POST) and a loaded CI machine's late timers. */
const SLACK_MS = 2000;

const nats = await startNatsServer(t);
const stack = await startFullStack(t, {
  merchant: { plan: 'scale', rateLimit: 60_000 },
  natsUrl: nats.url,
  env: { CONVERSION_RECONCILE_AFTER_MS: String(HORIZON_MS), WEBHOOK_RECONCILE_AFTER_MS: String(HORIZON_MS) },
});
const { sql } = stack.platform;

/** The commit time (ms) of the merchant's outbox rows of `type`, by the row's id or by `field` of its data. */
async function outboxTimes(type: string, tag: string, field: string): Promise<Map<string, number>> {
  const rows = await sql<{ id: string; key: string; at: Date }[]>`
    select id, data->>${field} as key, created_at as at from outbox
    where merchant_id = ${stack.merchant.id} and type = ${type} and data->>${field} like ${tag + '-%'}`;
  return new Map(rows.map((r) => [field === 'id' ? r.id : r.key, r.at.getTime()]));
}

function assertWithinBound(t: Asserts, what: string, delays: number[], count: number) {
  t.equal(delays.length, count, `${count} ${what}`);
  const earliest = Math.min(...delays);
  const latest = Math.max(...delays);
  t.ok(
    earliest >= HORIZON_MS - 50,
    `${what}: none before the ${HORIZON_MS} ms horizon, so through the reconciler (earliest ${earliest} ms)`,
  );
  t.ok(
    latest <= BOUND_MS + SLACK_MS,
    `${what}: every one within ${BOUND_MS} ms (+${SLACK_MS} ms slack) of its outbox row (latest ${latest} ms)`,
  );
}

t.test(
  `with no outbox relay running, everything flows through the reconcilers within ${BOUND_MS} ms of being written`,
  async (t) => {
    const relays = Object.values(stack.services).flatMap((s) => (s.relay ? [s.relay] : []));
    t.equal(relays.length, 3, 'the affiliates, events and commissions relays');
    for (const relay of relays) await relay.stop();

    const affiliates = [];
    for (let i = 0; i < 10; i++)
      affiliates.push(await stack.merchant.client.post('/api/v1/affiliates', { email: `late-${i}@example.com` }));
    t.same(
      affiliates.map((r) => r.status),
      Array(10).fill(201),
      '10 affiliates created',
    );
    const events = await postEvents(stack.merchant.client, 'late', 20);
    t.same(
      events.map((r) => r.status),
      Array(20).fill(201),
      '20 events recorded',
    );
    const unpublished = await sql<
      { n: number }[]
    >`select count(*)::int as n from outbox where published_at is null and merchant_id = ${stack.merchant.id}`;
    t.equal(unpublished[0]!.n, 30, 'their 30 outbox rows are unpublished: no stream took them');

    // The commissions: from the conversion.recorded row's commit to the commission.created row's (same transaction as
    // the commission).
    const conversions = await outboxTimes('conversion.recorded', 'late', 'external_id');
    const commissions = await eventually(
      async () => {
        const times = await outboxTimes('commission.created', 'late', 'order_id');
        return times.size === 20 ? times : undefined;
      },
      30_000,
      '20 commission.created',
    );
    assertWithinBound(
      t,
      'commissions',
      [...conversions].map(([order, at]) => commissions.get(order)! - at),
      20,
    );

    // The webhooks: from the commission.created or affiliate.created row's commit to the receiver's first receipt.
    const messages = new Map<string, number>();
    for (const type of ['commission.created', 'affiliate.created'] as const) {
      const field = type === 'commission.created' ? 'order_id' : 'email';
      const rows = await sql<{ id: string; at: Date }[]>`
      select id, created_at as at from outbox where merchant_id = ${stack.merchant.id} and type = ${type} and data->>${field} like 'late-%'`;
      for (const r of rows) messages.set(r.id, r.at.getTime());
    }
    t.equal(messages.size, 30, '30 webhook messages written');
    t.same(
      (await outboxIds(sql, stack.merchant.id, 'affiliate.created', 'late')).length,
      10,
      'an affiliate.created per affiliate',
    );
    const firstReceipt = await eventually(
      async () => {
        const first = new Map<string, number>();
        for (const r of stack.receiver.received) if (messages.has(r.id) && !first.has(r.id)) first.set(r.id, r.at);
        return first.size === messages.size ? first : undefined;
      },
      30_000,
      'every webhook',
    );
    assertWithinBound(
      t,
      'webhooks',
      [...messages].map(([id, at]) => firstReceipt.get(id)! - at),
      30,
    );

    t.ok(
      stack.logs.commissions.some((l) => /conversions missing from the stream processed from the outbox/.test(l)),
      'the commissions reconciler logged what it processed',
    );
    t.ok(
      stack.logs.dispatcher.some((l) => /events missing from the stream fanned out from the outbox/.test(l)),
      'the dispatcher reconciler logged what it fanned out',
    );
  },
);
