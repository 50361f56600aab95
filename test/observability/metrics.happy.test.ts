import type { ServerResponse } from 'node:http';
import t from 'tap';
import { setSettings, createAffiliate } from '../events/setup.ts';
import { postEvents, receivedIds, startFullStack } from '../helpers/full-stack.ts';
import { loadPaymentsConfig } from '@platform/payments/config';
import { startPaymentsService } from '@platform/payments/service';
import { captureLogger, eventually } from '../helpers/platform.ts';
import { dashboardExpressions, exportedNames, metricNames, ruleExpressions } from '../helpers/promql.ts';
import { startReceiver } from '../helpers/receiver.ts';

// Every metric the alert rules and the Grafana dashboard of deploy/observability read is exported by a running
// service: the whole platform in this process, a short load through it (affiliates, a referral click, conversion
// events, webhooks to a receiver that answers, one that never does and one that answers 410 Gone), then every
// service's /metrics on its ops port.
t.setTimeout(120_000);

// Attempts time out after 30 s: the held endpoint's deliveries stay in flight, and in its backlog, while the test looks.
const stack = await startFullStack(t, { env: { WEBHOOK_ATTEMPT_TIMEOUT_MS: '30000' } });
const { platform, merchant } = stack;
// The payments service as well: the alert rules read its ledger reconciler's gauge.
const payments = await startPaymentsService(
  loadPaymentsConfig({ ...platform.env, PUBLIC_BASE_URL: platform.baseUrl }),
  captureLogger('payments').log,
);
t.teardown(() => payments.close());
const { client } = merchant;

// A receiver that never answers keeps its endpoint's deliveries in the backlog; one that answers 410 Gone has its
// endpoint disabled by the dispatcher.
const unanswered: ServerResponse[] = [];
const held = await startReceiver(t, (_r, _n, res) => void unanswered.push(res));
const gone = await startReceiver(t, (_r, _n, res) => {
  res.statusCode = 410;
  res.end('gone');
});
const subscribe = async (url: string): Promise<string> => {
  const res = await client.post('/api/v1/webhook_endpoints', { url, event_types: ['commission.created'] });
  if (res.status !== 201) throw new Error(`creating the endpoint answered ${res.status}: ${res.text}`);
  return (res.body as { id: string }).id;
};
const heldEndpoint = await subscribe(held.url);
const goneEndpoint = await subscribe(gone.url);

await setSettings(platform.sql, merchant.id, { landing_url: 'https://shop.example.com/' });
for (const name of ['ana', 'ben', 'cho']) await createAffiliate(client, `${name}@example.com`, { slug: name });
const click = await fetch(`${platform.baseUrl}/r/${merchant.id}/ana`, { redirect: 'manual' });
if (click.status !== 302) throw new Error(`the referral click answered ${click.status}`);
const EVENTS = 10;
const answers = await postEvents(client, 'obs', EVENTS);
if (answers.some((a) => a.status !== 201)) throw new Error(`events answered ${answers.map((a) => a.status).join()}`);
const notFound = await client.get('/api/v1/affiliates/aff_00000000000000000000000000');
if (notFound.status !== 404) throw new Error(`a missing affiliate answered ${notFound.status}`);

await eventually(
  async () => (receivedIds(stack, 'commission.created').size >= EVENTS ? true : undefined),
  30_000,
  'a commission.created webhook per event at the answering receiver',
);
await eventually(
  async () =>
    (await client.get(`/api/v1/webhook_endpoints/${goneEndpoint}`)).body.enabled === false ? true : undefined,
  30_000,
  'the endpoint that answered 410 disabled',
);
await eventually(async () => (held.received.length > 0 ? true : undefined), 30_000, 'a request at the held receiver');

const opsPorts: Record<string, number> = {
  gateway: platform.gateways[0]!.opsPort,
  ...Object.fromEntries(Object.entries(stack.services).map(([name, s]) => [name, s.opsPort])),
  payments: payments.opsPort,
};
const scrapes: Record<string, string> = {};
for (const [service, port] of Object.entries(opsPorts)) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`${service}: /metrics answered ${res.status}`);
  scrapes[service] = await res.text();
}
const exported = new Set(Object.values(scrapes).flatMap((text) => [...exportedNames(text)]));

/** The value of the sample of `name` whose labels include `labels`, in one service's scrape. */
const sample = (service: string, name: string, labels: Record<string, string>): number | undefined => {
  for (const line of scrapes[service]!.split('\n')) {
    const match = /^([\w:]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => match[2]!.includes(`${k}="${v}"`))) return Number(match[3]);
  }
  return undefined;
};

await t.test('every metric name of the alert rules and the dashboard has samples in a scrape', async (t) => {
  const expressions = [...ruleExpressions(), ...dashboardExpressions()];
  const names = new Map<string, string>();
  for (const { where, expr } of expressions) for (const name of metricNames(expr)) names.set(name, where);
  t.ok(names.size >= 15, `${names.size} metric names`);
  for (const [name, where] of names) t.ok(exported.has(name), `${name} (${where}) is exported`);
});

await t.test('the gauges added for operators say what the load did', async (t) => {
  for (const service of Object.keys(opsPorts))
    t.equal(sample(service, 'service_ready', { service }), 1, `${service}: service_ready 1`);
  t.equal(sample('dispatcher', 'webhook_endpoints_disabled', { reason: 'gone' }), 1, 'one endpoint disabled: gone');
  t.equal(sample('dispatcher', 'webhook_endpoints_disabled', { reason: 'manual' }), 0, 'none by hand');
  t.equal(sample('dispatcher', 'webhook_endpoints_disabled', { reason: 'failure_threshold' }), 0, 'none by failures');
  t.equal(
    sample('dispatcher', 'webhook_endpoint_backlog_deliveries', {
      endpoint_id: heldEndpoint,
      merchant_id: merchant.id,
    }),
    EVENTS,
    "the held endpoint's backlog: every commission.created",
  );
  t.equal(
    sample('commissions', 'conversions_processed_total', { outcome: 'processed', via: 'stream' }),
    EVENTS,
    'every conversion processed once, from the stream',
  );
  t.equal(
    sample('events', 'operations_total', { operation: 'recordEvent', code: 'created' }),
    EVENTS,
    'conversions recorded',
  );
});

// The held attempts fail now, so that the dispatcher drains at once.
for (const res of unanswered) res.destroy();
