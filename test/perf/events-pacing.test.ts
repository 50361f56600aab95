import t from 'tap';
import { startWithEvents } from '../events/setup.ts';

/**
 * POST /api/v1/events records concurrent requests in batches, and paces the batches (EVENT_BATCH_INTERVAL_MS): an
 * event after a quiet spell is recorded at once, events arriving within the interval after a batch started are
 * recorded together by one statement at its end, each with its own answer. Events recorded by one statement share
 * its transaction's `created_at`. The interval is long here so that the test sees it; the default is 4 ms.
 */
const INTERVAL_MS = 1000;

const { platform } = await startWithEvents(t, { env: { EVENT_BATCH_INTERVAL_MS: String(INTERVAL_MS) } });
const merchant = await platform.merchant();

const event = (externalId: string) => ({
  event_type: 'purchase',
  external_id: externalId,
  coupon: 'NO-SUCH-CODE',
  amount: 10,
  currency: 'USD',
});

t.test('events within the interval after a batch are recorded together at its end, each answered', async (t) => {
  const quietStart = performance.now();
  const first = await merchant.client.post('/api/v1/events', event('order_first'));
  t.equal(first.status, 201);
  t.ok(
    performance.now() - quietStart < INTERVAL_MS,
    'the first event, after a quiet spell, did not wait for the interval',
  );

  const later = await Promise.all(
    ['order_a', 'order_b', 'order_c', 'order_a'].map((id) => merchant.client.post('/api/v1/events', event(id))),
  );
  t.same(
    later.map((r) => r.status),
    [201, 201, 201, 200],
    'each its own answer: the repeat of order_a in the same batch is answered with the stored event',
  );
  t.equal(later[3]!.body.id, later[0]!.body.id, 'the repeat is the same event');
  const createdAt = new Set(later.map((r) => r.body.created_at as string));
  t.equal(createdAt.size, 1, 'one statement recorded the three');
  const gap = Date.parse([...createdAt][0]!) - Date.parse(first.body.created_at);
  t.ok(gap >= INTERVAL_MS / 2, `their batch began ${gap} ms after the first one, not sooner than the interval`);

  const [stored] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from conversion_events where merchant_id = ${merchant.id}`;
  t.equal(stored!.n, 4, 'four events stored');
});
