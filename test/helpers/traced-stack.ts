import { createKey, createMerchant } from '../../scripts/admin/commands.ts';
import { createAffiliate, createCoupon, setSettings } from '../events/setup.ts';
import { ApiClient } from './client.ts';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts';
import { createTestDatabase, createTestNats, eventually, NATS_URL, spawnService, type TestLike } from './platform.ts';
import { startReceiver } from './receiver.ts';
import { TEST_DISPATCHER_ENV } from './webhooks.ts';

const SERVICES = ['gateway', 'affiliates', 'events', 'commissions', 'dispatcher'] as const;
export type TracedService = (typeof SERVICES)[number];

/** Every service's environment on the file's database and NATS prefix: ephemeral ports, the tests' dispatcher. */
export const stackEnv = (
  databaseUrl: string,
  prefix: string,
  extra: Record<string, string>,
): Record<string, string> => ({
  APP_ENV: 'test',
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_SIZE: '5',
  NATS_URL,
  NATS_PREFIX: prefix,
  OPS_PORT: '0',
  PORT: '0',
  HOST: '127.0.0.1',
  ...TEST_DISPATCHER_ENV,
  ...extra,
});

/**
 * Every service as its own process, started by its entry point (services/<name>/src/main.ts) with tracing on:
 * OTEL_EXPORTER_OTLP_ENDPOINT names a local OTLP/HTTP receiver, JSON protocol, spans exported every 100 ms. On the
 * file's own database and NATS prefix; a growth merchant with a key, a 10 % default rate, an affiliate with a
 * coupon, and a webhook receiver subscribed to affiliate.created and commission.created.
 */
export async function startTracedStack(t: TestLike, env: Record<string, string> = {}) {
  const otlp = await startOtlpReceiver(t);
  const db = await createTestDatabase(t);
  const bus = await createTestNats(t);
  const serviceEnv = stackEnv(db.url, bus.prefix, {
    LOG_LEVEL: 'debug',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    ...env,
  });
  const started = await Promise.all(SERVICES.map((name) => spawnService(t, name, serviceEnv)));
  const output = Object.fromEntries(SERVICES.map((name, i) => [name, started[i]!.output])) as Record<
    TracedService,
    string[]
  >;
  const listening = output.gateway.map((l) => /"msg":"listening".*"port":(\d+)/.exec(l)).find(Boolean);
  if (!listening) throw new Error(`the gateway did not say its port:\n${output.gateway.join('\n')}`);
  const baseUrl = `http://127.0.0.1:${listening[1]}`;

  const merchant = await createMerchant(db.sql, 'Traced merchant', 'growth');
  const merchantId = merchant!['id'] as string;
  const key = await createKey(db.sql, merchantId, 'read,write');
  const client = new ApiClient(baseUrl, key.key);
  await setSettings(db.sql, merchantId, { default_rate: 0.1 });
  const affiliate = await createAffiliate(client, 'lead@example.com');
  await createCoupon(client, affiliate.id, 'LEAD10');
  const receiver = await startReceiver(t);
  const endpoint = await client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['affiliate.created', 'commission.created'],
  });
  if (endpoint.status !== 201) throw new Error(`creating the endpoint answered ${endpoint.status}: ${endpoint.text}`);
  return {
    sql: db.sql,
    otlp,
    output,
    client,
    merchantId,
    key: key.key,
    receiver,
    endpoint: endpoint.body as { id: string; secret: string },
  };
}

export type TracedStack = Awaited<ReturnType<typeof startTracedStack>>;

/** The spans of one trace, once `done` finds what it needs among them (spans arrive in batches, per process). */
export async function traceSpans(
  stack: TracedStack,
  traceId: string,
  done: (spans: ReceivedSpan[]) => boolean,
  what: string,
): Promise<ReceivedSpan[]> {
  return eventually(
    async () => {
      const spans = stack.otlp.spans.filter((s) => s.traceId === traceId);
      return done(spans) ? spans : undefined;
    },
    15_000,
    what,
  );
}

/** The gateway's server span of the request with this X-Request-Id. */
export async function serverSpanOf(stack: TracedStack, requestId: string): Promise<ReceivedSpan> {
  return eventually(
    async () =>
      stack.otlp.spans.find((s) => s.service === 'gateway' && s.kind === 2 && s.attributes['request.id'] === requestId),
    15_000,
    `the gateway's span of request ${requestId}`,
  );
}

/** From `span` up to the root of its trace, through each parent; stops at a parent not received. */
export function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const path = [span];
  for (let s = byId.get(span.parentSpanId); s; s = byId.get(s.parentSpanId)) path.push(s);
  return path;
}

/**
 * Whether `span` is in the trace with every ancestor up to the request's root span: each service exports its spans
 * in batches of its own, so under load a leaf can arrive before the hops between it and the request.
 */
export const reachesRoot = (spans: ReceivedSpan[], span: ReceivedSpan | undefined): boolean =>
  span !== undefined && ancestry(spans, span).at(-1)!.parentSpanId === '';
