import t from 'tap';
import { createEventRecorder } from '@platform/events/recording';
import { newId } from '@platform/shared/ids';
import { captureLogger, createTestDatabase } from '../helpers/platform.ts';

/**
 * The events service records concurrent POST /api/v1/events requests in batches, and paces the batches: an event
 * after a quiet spell is recorded at once, events arriving within the interval after a batch started are recorded
 * together by one statement at its end, each with its own answer. Events recorded by one statement share its
 * transaction's `created_at`. The interval is long here so that the test sees it; the service's is
 * EVENT_BATCH_INTERVAL_MS in recording.ts (4 ms).
 */
const INTERVAL_MS = 1000;

const { sql } = await createTestDatabase(t);
const merchantId = newId('mer');
await sql`insert into merchants (id, name, plan) values (${merchantId}, 'Pacing', 'growth')`;
const record = createEventRecorder(sql, sql, INTERVAL_MS);
const { log } = captureLogger('events');

const event = (externalId: string) => ({
  event_type: 'purchase',
  external_id: externalId,
  coupon: 'NO-SUCH-CODE',
  amount: 10,
  currency: 'USD',
});
const answer = (r: Awaited<ReturnType<typeof record>>) =>
  r.outcome === 'no_content' ? { outcome: r.outcome, body: {} } : { outcome: r.outcome, body: r.body as any };

t.test('events within the interval after a batch are recorded together at its end, each answered', async (t) => {
  const quietStart = performance.now();
  const first = answer(await record(merchantId, event('order_first'), log));
  t.equal(first.outcome, 'created');
  t.ok(
    performance.now() - quietStart < INTERVAL_MS,
    'the first event, after a quiet spell, did not wait for the interval',
  );

  const later = (
    await Promise.all(['order_a', 'order_b', 'order_c', 'order_a'].map((id) => record(merchantId, event(id), log)))
  ).map(answer);
  t.same(
    later.map((r) => r.outcome),
    ['created', 'created', 'created', 'ok'],
    'each its own answer: the repeat of order_a in the same batch is answered with the stored event',
  );
  t.equal(later[3]!.body.id, later[0]!.body.id, 'the repeat is the same event');
  const createdAt = new Set(later.map((r) => r.body.created_at as string));
  t.equal(createdAt.size, 1, 'one statement recorded the three');
  const gap = Date.parse([...createdAt][0]!) - Date.parse(first.body.created_at);
  t.ok(gap >= INTERVAL_MS / 2, `their batch began ${gap} ms after the first one, not sooner than the interval`);

  const [stored] = await sql<{ n: number }[]>`
    select count(*)::int as n from conversion_events where merchant_id = ${merchantId}`;
  t.equal(stored!.n, 4, 'four events stored');
});
