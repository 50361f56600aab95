import t from 'tap';
import { eventBody } from '../helpers/full-stack.ts';
import { SPAN_KIND, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import {
  ancestry,
  reachesRoot,
  serverSpanOf,
  startTracedStack,
  traceSpans,
  type TracedStack,
} from '../helpers/traced-stack.ts';

// Every service as its own process, tracing to the test's OTLP receiver (JSON protocol).
const stack = await startTracedStack(t);

/** The services that run an outbox relay (OUTBOX_RELAY): any of them may publish a row, whoever wrote it. */
const RELAY = '(affiliates|commissions|events)';
/** What a span is, for comparing paths: service, kind and name. */
const describe = (s: ReceivedSpan) => `${s.service} ${kindName(s.kind)} ${s.name}`;
const kindName = (kind: number) => Object.entries(SPAN_KIND).find(([, k]) => k === kind)?.[0] ?? String(kind);

/** The dispatcher's webhook POST span of the delivery to the test's endpoint whose trace is `traceId`. */
const webhookSpan = (spans: ReceivedSpan[]) =>
  spans.find((s) => s.service === 'dispatcher' && s.kind === SPAN_KIND.client && s.name === 'webhook POST');

async function received(s: TracedStack, type: string, match: (data: Record<string, unknown>) => boolean) {
  return eventually(
    async () => s.receiver.received.find((r) => r.type === type && match((JSON.parse(r.body) as { data: never }).data)),
    15_000,
    `the ${type} webhook`,
  );
}

t.test('POST /api/v1/events to the webhook of its commission is one trace, hop by hop', async (t) => {
  const res = await stack.client.post('/api/v1/events', eventBody('order-traced', 1));
  t.equal(res.status, 201);
  await received(stack, 'commission.created', (d) => d['order_id'] === 'order-traced-1');

  const server = await serverSpanOf(stack, res.headers.get('x-request-id')!);
  t.equal(server.name, 'POST /api/v1/events');
  t.equal(server.parentSpanId, '', 'the request starts its trace');
  t.equal(server.attributes['http.route'], '/api/v1/events');
  t.equal(server.attributes['http.request.method'], 'POST');
  t.equal(server.attributes['http.response.status_code'], 201);
  t.equal(server.attributes['merchant.id'], stack.merchantId);

  const isDb = (s: ReceivedSpan, service: string, name?: string) =>
    s.service === service && s.attributes['db.system.name'] === 'postgresql' && (name === undefined || s.name === name);
  const spans = await traceSpans(
    stack,
    server.traceId,
    (s) =>
      reachesRoot(s, webhookSpan(s)) &&
      [
        ['events', 'insert conversion_events'],
        ['commissions', 'process conversions'],
        ['dispatcher', 'fan out events'],
        ['gateway', undefined],
      ].every(([service, name]) => s.some((x) => isDb(x, service!, name))) &&
      s.every((x) => x.attributes['db.system.name'] !== 'postgresql' || s.some((p) => p.spanId === x.parentSpanId)),
    'the webhook POST span, its every ancestor and the database spans',
  );
  // The outbox relays that published conversion.recorded and commission.created (any service's, see below) add
  // their services' spans.
  const relays = spans
    .filter((s) => / producer send .*\.(domain\.commission\.created|conversion\.recorded)$/.test(describe(s)))
    .map((s) => s.service);
  t.same(
    [...new Set(spans.map((s) => s.service))].sort(),
    [...new Set(['commissions', 'dispatcher', 'events', 'gateway', ...relays])].sort(),
    'gateway, events, commissions and dispatcher spans in the one trace (and the relays that published)',
  );

  const post = webhookSpan(spans)!;
  t.equal(post.attributes['webhook.endpoint.id'], stack.endpoint.id);
  t.equal(post.attributes['webhook.attempt'], 1);
  t.equal(post.attributes['http.response.status_code'], 200);
  t.equal(post.attributes['http.request.method'], 'POST');

  // The webhook POST's ancestors, up to the request: every hop a producer span and the next service's consumer.
  // t.match on arrays matches each element, so the length is checked on its own.
  const path = ancestry(spans, post).map(describe);
  t.match(path, [
    'dispatcher client webhook POST',
    /^dispatcher consumer process .*\.domain\.commission\.created$/,
    // Published by an outbox relay: the writer's own as a rule, but every service runs one and any may claim the
    // row first (on a busy machine another often does). The outbox row keeps the context of the transaction that
    // wrote it, so the next hop is that transaction whichever relay sent it.
    new RegExp(`^${RELAY} producer send .*\\.domain\\.commission\\.created$`),
    'commissions client process conversions',
    /^commissions consumer process .*\.conversion\.recorded$/,
    // Written to the outbox by the events service's recording, published by any relay likewise.
    new RegExp(`^${RELAY} producer send .*\\.conversion\\.recorded$`),
    /^events consumer process .*\.rpc\.events\.record$/,
    /^gateway producer send .*\.rpc\.events\.record$/,
    'gateway server POST /api/v1/events',
  ]);
  t.equal(path.length, 9, 'nothing else between the request and the webhook POST');

  // Postgres work of the hot paths, as children within the trace, named by what it does.
  const database = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql');
  t.ok(
    database.some((s) => s.service === 'events' && s.name === 'insert conversion_events'),
    'the events insert',
  );
  t.ok(
    database.some((s) => s.service === 'commissions' && s.name === 'process conversions'),
    'the commissions transaction',
  );
  t.ok(
    database.some((s) => s.service === 'dispatcher' && s.name === 'fan out events'),
    'the fan-out transaction',
  );
  t.ok(
    database.some((s) => s.service === 'gateway'),
    'the gateway key or rate read',
  );
  for (const s of database)
    t.ok(
      spans.some((p) => p.spanId === s.parentSpanId),
      `${describe(s)} has its parent`,
    );
});

t.test('an affiliate.created webhook is in the trace of the request that created the affiliate', async (t) => {
  const res = await stack.client.post('/api/v1/affiliates', { email: 'traced@example.com' });
  t.equal(res.status, 201);
  await received(stack, 'affiliate.created', (d) => d['email'] === 'traced@example.com');
  const server = await serverSpanOf(stack, res.headers.get('x-request-id')!);
  t.equal(server.attributes['http.route'], '/api/v1/affiliates');
  const spans = await traceSpans(
    stack,
    server.traceId,
    (s) => reachesRoot(s, webhookSpan(s)),
    'the webhook POST span and its every ancestor',
  );
  t.match(ancestry(spans, webhookSpan(spans)!).map(describe), [
    'dispatcher client webhook POST',
    /^dispatcher consumer process .*\.domain\.affiliate\.created$/,
    /^affiliates producer send .*\.domain\.affiliate\.created$/,
    /^affiliates consumer process .*\.rpc\.affiliates\.create$/,
    /^gateway producer send .*\.rpc\.affiliates\.create$/,
    'gateway server POST /api/v1/affiliates',
  ]);
});

t.test("a delivery's retry, attempted later by the sweeper, is in the trace of the request too", async (t) => {
  // An endpoint that answers its first request 503 and the next 200: the second attempt is the sweeper's.
  const failingOnce = await startReceiver(
    t,
    (_req, n, res) => void (n === 1 ? res.writeHead(503).end() : res.end('ok')),
  );
  const created = await stack.client.post('/api/v1/webhook_endpoints', {
    url: failingOnce.url,
    event_types: ['affiliate.created'],
  });
  t.equal(created.status, 201);
  const res = await stack.client.post('/api/v1/affiliates', { email: 'retried@example.com' });
  t.equal(res.status, 201);
  await eventually(async () => (failingOnce.received.length >= 2 ? true : undefined), 15_000, 'the retry');
  const server = await serverSpanOf(stack, res.headers.get('x-request-id')!);
  const attemptsOf = (spans: ReceivedSpan[]) =>
    spans.filter((s) => s.name === 'webhook POST' && s.attributes['webhook.endpoint.id'] === created.body.id);
  const spans = await traceSpans(
    stack,
    server.traceId,
    (s) => attemptsOf(s).length >= 2 && attemptsOf(s).every((a) => reachesRoot(s, a)),
    'both attempts and their every ancestor',
  );
  const attempts = attemptsOf(spans).sort(
    (a, b) => Number(a.attributes['webhook.attempt']) - Number(b.attributes['webhook.attempt']),
  );
  t.same(
    attempts.map((s) => [s.attributes['webhook.attempt'], s.attributes['http.response.status_code']]),
    [
      [1, 503],
      [2, 200],
    ],
  );
  t.equal(attempts[0]!.status.code, 2, 'the 503 attempt is an error');
  for (const a of attempts)
    t.equal(ancestry(spans, a).at(-1)!.spanId, server.spanId, 'the attempt leads back to the request');
});

t.test("a replay's hint carries the replay request's trace to the dispatcher replica that claims it", async (t) => {
  const deliveries = await stack.client.get(`/api/v1/webhook_endpoints/${stack.endpoint.id}/deliveries`);
  t.equal(deliveries.status, 200);
  const delivery = (deliveries.body as { data: { id: string }[] }).data[0]!;
  const res = await stack.client.post(`/api/v1/webhook_deliveries/${delivery.id}/replay`);
  t.equal(res.status, 200);
  const server = await serverSpanOf(stack, res.headers.get('x-request-id')!);
  const claimOf = (spans: ReceivedSpan[]) =>
    spans.find(
      (s) => s.service === 'dispatcher' && s.kind === SPAN_KIND.consumer && /\.webhook\.attempt$/.test(s.name),
    );
  const spans = await traceSpans(
    stack,
    server.traceId,
    (s) => reachesRoot(s, claimOf(s)),
    'the hint consumer span and its every ancestor',
  );
  t.match(ancestry(spans, claimOf(spans)!).map(describe), [
    /^dispatcher consumer process .*\.webhook\.attempt$/,
    /^dispatcher producer send .*\.webhook\.attempt$/,
    /^dispatcher consumer process .*\.rpc\.dispatcher\.replayDelivery$/,
    /^gateway producer send .*\.rpc\.dispatcher\.replayDelivery$/,
    'gateway server POST /api/v1/webhook_deliveries/{delivery_id}/replay',
  ]);
});

t.test('log lines written inside a request carry its trace_id and a span_id', async (t) => {
  const res = await stack.client.post('/api/v1/events', eventBody('order-traced', 2));
  t.equal(res.status, 201);
  const requestId = res.headers.get('x-request-id')!;
  const server = await serverSpanOf(stack, requestId);
  const line = await eventually(
    async () =>
      stack.output.events
        .filter((l) => l.includes('"msg":"conversion event recorded"') && l.includes(requestId))
        .map((l) => JSON.parse(l) as Record<string, unknown>)[0],
    10_000,
    'the events service log line of the request',
  );
  t.equal(line['trace_id'], server.traceId);
  t.match(line['span_id'], /^[0-9a-f]{16}$/);
  t.not(line['span_id'], '0000000000000000');
  // A line of the commissions consumer that processed it carries the same trace.
  const spans = await traceSpans(
    stack,
    server.traceId,
    (s) => s.some((x) => x.service === 'commissions'),
    'the commissions span',
  );
  const commissionSpanIds = new Set(spans.filter((s) => s.service === 'commissions').map((s) => s.spanId));
  const processed = await eventually(
    async () =>
      stack.output.commissions
        .filter((l) => l.includes('"msg":"conversion processed"') && l.includes(res.body.id))
        .map((l) => JSON.parse(l) as Record<string, unknown>)[0],
    10_000,
    'the commissions log line of the event',
  );
  t.equal(processed['trace_id'], server.traceId);
  t.ok(commissionSpanIds.has(processed['span_id'] as string), 'the span_id is a commissions span of the trace');
});
