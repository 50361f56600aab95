import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { streamName } from '@platform/shared/catalogue';
import { outboxIds, postEvents, startFullStack } from '../helpers/full-stack.ts';
import { eventually } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

// docs/ARCHITECTURE.md's third recovery bound: deliveries that are due are attempted by the sweeper's next pass,
// every second, even while no hint can be published (the sweeper leases them itself). The sweeper runs at its default interval here
// (WEBHOOK_SWEEP_INTERVAL_MS 1000; the webhook tests' settings shorten it to 100 ms). The WEBHOOK_ATTEMPTS stream is
// replaced by one of the same name that takes another subject: the topology check finds the stream there, so nothing
// recreates it, and every hint is refused for as long as the test wants. The receiver fails each webhook's first
// attempt; its retry is due 5 ms later (the tests' WEBHOOK_BACKOFF_SCALE 0.001 of the table's 5 s), and must arrive
// within the sweeper's second of that.
t.setTimeout(90_000);
const SWEEP_MS = 1000;
/** The pass's own work (a pass still running when the next is due delays it) on a loaded CI machine. */
const SLACK_MS = 1000;

const nats = await startNatsServer(t);
const stack = await startFullStack(t, {
  merchant: { plan: 'scale', rateLimit: 60_000 },
  natsUrl: nats.url,
  env: { WEBHOOK_SWEEP_INTERVAL_MS: String(SWEEP_MS) },
});

t.test(
  `with no hint publishable, a due retry is attempted by the sweeper's next pass (every ${SWEEP_MS} ms)`,
  async (t) => {
    const jsm = await jetstreamManager(stack.platform.nc);
    const hints = streamName(stack.platform.prefix, 'WEBHOOK_ATTEMPTS');
    await jsm.streams.delete(hints);
    await jsm.streams.add({ name: hints, subjects: [`${stack.platform.prefix}.not-hints`] });

    const tries = new Map<string, number>();
    stack.receiver.setResponder((hook, _n, res) => {
      const n = (tries.get(hook.id) ?? 0) + 1;
      tries.set(hook.id, n);
      res.statusCode = n === 1 ? 500 : 200;
      res.end(n === 1 ? 'not yet' : 'ok');
    });
    // One webhook at a time: an endpoint that is failing takes one attempt at a time (WEBHOOK_ENDPOINT_CONCURRENCY),
    // so several retries due together would be attempted one pass after another, whatever the hints.
    const gaps: number[] = [];
    for (let round = 0; round < 3; round++) {
      const tag = `unhinted${round}`;
      const events = await postEvents(stack.merchant.client, tag, 1);
      t.equal(events[0]!.status, 201, `event ${round} recorded`);
      const [message] = await eventually(
        async () => {
          const ids = await outboxIds(stack.platform.sql, stack.merchant.id, 'commission.created', tag);
          return ids.length === 1 ? ids : undefined;
        },
        15_000,
        'its commission.created',
      );
      const [first, second] = await eventually(
        async () => {
          const at = stack.receiver.received.filter((r) => r.id === message).map((r) => r.at);
          return at.length >= 2 ? at : undefined;
        },
        20_000,
        'its webhook retried',
      );
      gaps.push(second! - first!);
    }
    t.ok(
      Math.max(...gaps) <= SWEEP_MS + SLACK_MS,
      `every retry within ${SWEEP_MS} ms (+${SLACK_MS} ms slack) of its failed first attempt (${gaps.join(', ')} ms)`,
    );
    t.ok(
      stack.logs.dispatcher.some((l) => /could not publish delivery hints; the sweeper will/.test(l)),
      'the hints were refused',
    );

    // The stream that takes hints again: the topology check recreates it and the dispatcher's consumer.
    await jsm.streams.delete(hints);
    await eventually(
      async () =>
        (await fetch(`http://127.0.0.1:${stack.services['dispatcher']!.opsPort}/readyz`)).status === 200
          ? true
          : undefined,
      15_000,
      'dispatcher ready',
    );
    t.pass('the dispatcher is ready again once the stream can be recreated');
  },
);
