import t from 'tap';
import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { streamName, webhookAttemptSubject } from '@platform/shared/catalogue';
import { eventually, startPlatform } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// /readyz tells the truth about the topology: while a consumer a service needs is gone and cannot be recreated (here
// another consumer holds the work-queue stream's subject, which JetStream then refuses to share), the service is not
// ready; once it can be recreated again, it is, without a restart. /metrics carries what an alert needs.
t.setTimeout(120_000);

const nats = await startNatsServer(t);
const platform = await startPlatform(t, { natsUrl: nats.url });
const { dispatcher, logs } = await startDispatcher(t, platform);
const ops = `http://127.0.0.1:${dispatcher.opsPort}`;
const readyStatus = async () => (await fetch(`${ops}/readyz`)).status;
const metricsText = async () => (await fetch(`${ops}/metrics`)).text();
const stream = streamName(platform.prefix, 'WEBHOOK_ATTEMPTS');

t.test('ready, with the recovery gauges on /metrics', async (t) => {
  t.equal(await readyStatus(), 200);
  const metrics = await metricsText();
  t.match(metrics, /^service_ready\{service="dispatcher"\} 1$/m, 'service_ready 1 while /readyz answers 200');
  t.match(
    metrics,
    /^jetstream_consumer_lag_messages\{consumer="dispatcher",service="dispatcher"\} 0$/m,
    'lag of the fan-out consumer',
  );
  t.match(
    metrics,
    /^jetstream_consumer_lag_messages\{consumer="dispatcher-attempts",service="dispatcher"\} 0$/m,
    'lag of the hint consumer',
  );
  t.match(metrics, /^webhook_deliveries_due_unattempted\{service="dispatcher"\} 0$/m, 'due deliveries not attempted');
  t.match(metrics, /^webhook_oldest_due_unattempted_age_seconds\{service="dispatcher"\} 0$/m);
  const affiliates = await (await fetch(`http://127.0.0.1:${platform.affiliates.opsPort}/metrics`)).text();
  t.match(
    affiliates,
    /^outbox_oldest_unpublished_age_seconds\{service="affiliates"\} 0$/m,
    'age of the oldest unpublished outbox row',
  );
});

t.test('a consumer that cannot be recreated: not ready; once it can be, ready again', async (t) => {
  const jsm = await jetstreamManager(platform.nc);
  await jsm.consumers.delete(stream, 'dispatcher-attempts');
  // Taken before the dispatcher recreates its own (it waits a second after finding it gone).
  await jsm.consumers.add(stream, {
    durable_name: 'intruder',
    ack_policy: AckPolicy.Explicit,
    filter_subject: webhookAttemptSubject(platform.prefix),
  });
  const down = await eventually(
    async () => ((await readyStatus()) === 503 ? 503 : undefined),
    15_000,
    '/readyz to answer 503',
  );
  t.equal(down, 503, 'not ready');
  t.match(await metricsText(), /^service_ready\{service="dispatcher"\} 0$/m, 'service_ready 0 on /metrics');
  t.same(await (await fetch(`${ops}/readyz`)).json(), { status: 'not ready' });
  t.ok(
    logs.some((l) => /JetStream topology incomplete/.test(l) && /dispatcher-attempts/.test(l)),
    'the reason is logged',
  );
  t.equal((await fetch(`${ops}/healthz`)).status, 200, 'still alive');

  await jsm.consumers.delete(stream, 'intruder');
  const up = await eventually(
    async () => ((await readyStatus()) === 200 ? 200 : undefined),
    15_000,
    '/readyz to answer 200',
  );
  t.equal(up, 200, 'ready again');
  t.match(await metricsText(), /^service_ready\{service="dispatcher"\} 1$/m, 'service_ready 1 again');
  const info = await jsm.consumers.info(stream, 'dispatcher-attempts');
  t.equal(info.config.durable_name, 'dispatcher-attempts', 'its consumer recreated');
  t.ok(logs.some((l) => /JetStream topology complete again/.test(l)));
});
