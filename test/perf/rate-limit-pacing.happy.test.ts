import t from 'tap';
import { createRateLimiter } from '@platform/gateway/http/rate-limit/limiter';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * The shared rate limiter paces its counting statements: a request after a quiet spell is counted at once, requests
 * within the interval after a count are counted together at its end, each still taking its own slot of the window.
 * The interval is long here so that the test sees it; the gateway's is RATE_LIMIT_BATCH_INTERVAL_MS (4 ms).
 */
const INTERVAL_MS = 1000;

const { sql } = await createTestDatabase(t);
const limiter = createRateLimiter(sql, INTERVAL_MS);
const counts: number[] = [];
const counted = () => counts.push(performance.now());

t.test('requests within the interval after a count wait for its end, each with its own slot', async (t) => {
  const quietStart = performance.now();
  const first = await limiter.consume('key_paced', 600).finally(counted);
  t.ok(counts[0]! - quietStart < INTERVAL_MS, 'the first request, after a quiet spell, did not wait for the interval');

  const later = await Promise.all([
    limiter.consume('key_paced', 600).finally(counted),
    limiter.consume('key_paced', 600).finally(counted),
    limiter.consume('key_other', 600).finally(counted),
  ]);
  const waited = counts[1]! - counts[0]!;
  t.ok(waited >= INTERVAL_MS / 2, `the next ones were counted ${waited.toFixed(0)} ms later, not sooner`);
  t.same(
    [first, ...later].map((d) => d.remaining),
    [599, 598, 597, 599],
    'each took its own slot of its key’s window, both keys in one statement',
  );
  t.ok(
    [first, ...later].every((d) => d.allowed),
    'all allowed',
  );
});

t.test('the limit stays exact when a batch crosses it', async (t) => {
  const decisions = await Promise.all([1, 2, 3].map(() => limiter.consume('key_small', 2)));
  t.same(
    decisions.map((d) => [d.allowed, d.remaining]),
    [
      [true, 1],
      [true, 0],
      [false, 0],
    ],
    'the third request of a limit of two is refused, though counted in the same statement',
  );
});
