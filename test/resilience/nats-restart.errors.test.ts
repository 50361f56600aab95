import t from 'tap';
import { assertAnsweredAndRetry, assertProcessedOnce, pacedBurst } from '../helpers/burst.ts';
import { startFullStack } from '../helpers/full-stack.ts';
import { sleep } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

// The file's own nats-server (its own port and store) killed with SIGKILL during a burst of 500 events and started
// again, first on the same store, then on an empty one (its JetStream storage lost), with no service restarted.
// While it is down the API answers 503 UNAVAILABLE with Retry-After; afterwards every event gets exactly one level-0
// commission and every commission.created webhook arrives. On the empty store what the lost streams held comes back
// through the reconcilers; their horizon is shortened here (CONVERSION_RECONCILE_AFTER_MS 5 s instead of 60 s, and
// the dispatcher's test settings), which is what docs/ARCHITECTURE.md's 70 s becomes with these settings.
t.setTimeout(170_000);

const nats = await startNatsServer(t);
const stack = await startFullStack(t, {
  merchant: { plan: 'scale', rateLimit: 60_000 },
  natsUrl: nats.url,
  env: { CONVERSION_RECONCILE_AFTER_MS: '5000' },
});

/** One event every 10 ms (5 s): the server is killed 1 s in, for 2 s, so the burst runs before, through and after. */
async function burstAcrossRestart(tag: string, restart: () => Promise<void>) {
  const burst = pacedBurst(stack, tag, 500, 10);
  await sleep(1000);
  await nats.kill();
  await sleep(2000);
  await restart();
  return burst;
}

t.test('killed and restarted on the same store during a burst of 500 events', async (t) => {
  const responses = await burstAcrossRestart('same', () => nats.restart());
  await assertAnsweredAndRetry(t, stack, responses, 'same');
  await assertProcessedOnce(t, stack, 'same', 500);
});

t.test('killed and restarted on an empty store during a burst of 500 events', async (t) => {
  const responses = await burstAcrossRestart('empty', () => nats.restart({ emptyStore: true }));
  await assertAnsweredAndRetry(t, stack, responses, 'empty');
  await assertProcessedOnce(t, stack, 'empty', 500);
});
