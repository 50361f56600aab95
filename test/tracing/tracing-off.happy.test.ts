import { createRequire, registerHooks } from 'node:module';
import t from 'tap';

// Every module this process loads from here on, as resolved: registered before anything of the platform is
// imported (the imports below are dynamic for that reason), so that an SDK module loaded by any of it shows.
const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    resolved.push(result.url);
    return result;
  },
});
const isSdk = (url: string) => /@opentelemetry[/\\](sdk-|exporter-|context-async-hooks|resources)/.test(url);

const { trace, context } = await import('@opentelemetry/api');
const { withTracing } = await import('@platform/shared/tracing/start');
const { tracingEnabled } = await import('@platform/shared/tracing/context');
const { loadGatewayConfig } = await import('@platform/gateway/config');
const { startGateway } = await import('@platform/gateway/service');
const { loadAffiliatesConfig } = await import('@platform/affiliates/config');
const { startAffiliatesService } = await import('@platform/affiliates/service');
const { loadEventsConfig } = await import('@platform/events/config');
const { startEventsService } = await import('@platform/events/service');
const { loadCommissionsConfig } = await import('@platform/commissions/config');
const { startCommissionsService } = await import('@platform/commissions/service');
const { loadDispatcherConfig } = await import('@platform/dispatcher/config');
const { startDispatcherService } = await import('@platform/dispatcher/service');
const { createKey, createMerchant } = await import('../../scripts/admin/commands.ts');
const { ApiClient } = await import('../helpers/client.ts');
const { startOtlpReceiver } = await import('../helpers/otlp-receiver.ts');
const { captureLogger, createTestDatabase, createTestNats, eventually } = await import('../helpers/platform.ts');
const { stackEnv } = await import('../helpers/traced-stack.ts');
const { startReceiver } = await import('../helpers/receiver.ts');
const { readStream } = await import('../helpers/stream.ts');
const { streamName } = await import('@platform/shared/catalogue');
const { createAffiliate, createCoupon, setSettings } = await import('../events/setup.ts');

// The platform as the entry points start it (services/*/src/main.ts: withTracing around the service), in this
// process, with every OTEL_* setting but an endpoint: a collector listens, and must hear nothing.
const otlp = await startOtlpReceiver(t);
const db = await createTestDatabase(t);
const bus = await createTestNats(t);
const env = stackEnv(db.url, bus.prefix, {
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_TRACES_SAMPLER: 'always_on',
  OTEL_BSP_SCHEDULE_DELAY: '10',
  OTEL_RESOURCE_ATTRIBUTES: `collector.url=${encodeURIComponent(otlp.endpoint)}`,
});
const logs = Object.fromEntries(
  ['gateway', 'affiliates', 'events', 'commissions', 'dispatcher'].map((s) => [s, captureLogger(s)]),
);
const start = async <C, R extends { close(): Promise<void> }>(
  name: string,
  load: (e: NodeJS.ProcessEnv) => C,
  run: (config: C, log: ReturnType<typeof captureLogger>['log']) => Promise<R>,
) => {
  const running = await withTracing(
    name,
    () => load(env) as C & object,
    (config) => run(config, logs[name]!.log),
  )();
  t.teardown(() => running.close());
  return running;
};
await start('affiliates', loadAffiliatesConfig, startAffiliatesService);
await start('events', loadEventsConfig, startEventsService);
await start('commissions', loadCommissionsConfig, startCommissionsService);
await start('dispatcher', loadDispatcherConfig, startDispatcherService);
await start('gateway', loadGatewayConfig, startGateway);
const port = JSON.parse(logs['gateway']!.lines.find((l) => l.includes('"msg":"listening"'))!)['port'] as number;

const merchant = await createMerchant(db.sql, 'Untraced merchant', 'growth');
const merchantId = merchant!['id'] as string;
const client = new ApiClient(`http://127.0.0.1:${port}`, (await createKey(db.sql, merchantId, 'read,write')).key);
await setSettings(db.sql, merchantId, { default_rate: 0.1 });
const receiver = await startReceiver(t);
t.equal(
  (
    await client.post('/api/v1/webhook_endpoints', {
      url: receiver.url,
      event_types: ['affiliate.created', 'commission.created'],
    })
  ).status,
  201,
);

t.test('with no endpoint the SDK is never loaded and no span is created', async (t) => {
  const affiliate = await createAffiliate(client, 'untraced@example.com');
  await createCoupon(client, affiliate.id, 'UNTRACED');
  const res = await client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order-untraced',
    amount: 80,
    currency: 'USD',
    coupon: 'untraced',
  });
  t.equal(res.status, 201);
  await eventually(
    async () => (receiver.received.filter((r) => r.type !== '').length >= 2 ? true : undefined),
    15_000,
    'the affiliate.created and commission.created webhooks',
  );

  t.notOk(tracingEnabled(), 'tracing stayed off');
  t.ok(
    resolved.some((url) => url.includes('/@opentelemetry/api/')),
    'the hook saw the platform load the API (so what it did not see was not loaded)',
  );
  t.same(resolved.filter(isSdk), [], 'no module of the SDK, its exporters or its context manager was resolved');
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  t.same(cjs.filter(isSdk), [], 'nor required');

  // The API without an SDK: spans that record nothing, with no trace id, and no context manager keeping them.
  const probe = trace.getTracer('probe').startSpan('probe');
  t.notOk(probe.isRecording());
  t.equal(probe.spanContext().traceId, '00000000000000000000000000000000');
  t.equal(
    context.with(trace.setSpan(context.active(), probe), () => trace.getSpan(context.active())),
    undefined,
    'no context manager: nothing is ever active',
  );

  // Nothing traced went anywhere: no trace context in the outbox rows or on the stream's messages, none in a log
  // line, and the collector heard nothing.
  const rows = await db.sql<{ n: number }[]>`select count(*)::int as n from outbox where trace_context is not null`;
  t.equal(rows[0]!.n, 0, 'no outbox row keeps a trace context');
  const total = await db.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
  t.ok(total[0]!.n >= 3, 'the outbox rows of the affiliate, the event and the commission');
  const messages = [
    ...(await readStream(bus.nc, streamName(bus.prefix, 'CONVERSIONS'))),
    ...(await readStream(bus.nc, streamName(bus.prefix, 'DOMAIN_EVENTS'))),
  ];
  t.ok(messages.length >= 3, 'the conversion.recorded, affiliate.created and commission.created messages');
  for (const m of messages) t.notOk(/traceparent|tracestate/i.test(m.headers), `${m.subject} carries no trace context`);
  for (const [service, captured] of Object.entries(logs))
    t.notOk(
      captured.lines.some((l) => l.includes('"trace_id"')),
      `no ${service} log line carries a trace_id`,
    );
  t.same(otlp.spans, [], 'the collector received no span');
  t.same(otlp.refused, [], 'nor anything else');
});
