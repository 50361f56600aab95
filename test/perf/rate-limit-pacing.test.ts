import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';
import { rateHeaders } from '../gateway/expect.ts';

/**
 * The shared rate limiter paces its counting statements (RATE_LIMIT_BATCH_INTERVAL_MS): a request after a quiet spell
 * is counted at once, requests within the interval after a count are counted together at its end, each still taking
 * its own slot of the window. The interval is long here so that the test sees it; the default is 4 ms.
 */
const INTERVAL_MS = 1000;

const platform = await startPlatform(t, { env: { RATE_LIMIT_BATCH_INTERVAL_MS: String(INTERVAL_MS) } });

t.test('requests within the interval after a count wait for its end, each with its own slot', async (t) => {
  const { client } = await platform.merchant();
  const quietStart = performance.now();
  const first = await client.get('/api/v1/affiliates');
  t.equal(first.status, 200);
  const counted = performance.now();
  t.ok(counted - quietStart < INTERVAL_MS, 'the first request, after a quiet spell, did not wait for the interval');

  const later = await Promise.all([client.get('/api/v1/affiliates'), client.get('/api/v1/affiliates')]);
  const waited = performance.now() - counted;
  t.same(
    later.map((r) => r.status),
    [200, 200],
  );
  t.ok(
    waited >= INTERVAL_MS / 2,
    `the next two were answered ${waited.toFixed(0)} ms later, not sooner than the interval allows`,
  );
  t.same(
    [first, ...later].map((r) => rateHeaders(t, r).remaining).sort((a, b) => b - a),
    [599, 598, 597],
    'each took its own slot of the window',
  );
});
