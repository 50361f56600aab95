import t from 'tap';
import { eventually } from '../helpers/platform.ts';
import { startTracedStack } from '../helpers/traced-stack.ts';
import { taxFormsPath, w9 } from '../tax-forms/setup.ts';

// Every service as its own process, tracing to the test's OTLP receiver; every span of the run is searched.
const stack = await startTracedStack(t);

const TIN = '123-45-6789';
const marker = `body-marker-${Date.now().toString(36)}`;
const eventBody = {
  event_type: 'purchase',
  external_id: `order-${marker}`,
  amount: 99.5,
  currency: 'USD',
  coupon: 'lead10',
  payload: { note: marker, tin: TIN, customer_email: `${marker}@example.com` },
};
const affiliateBody = { email: `${marker}.affiliate@example.com`, display_name: `Name ${marker}` };

t.test('no span carries an API key, a webhook secret, a TIN or a request body', async (t) => {
  t.equal((await stack.client.post('/api/v1/events', eventBody)).status, 201);
  const affiliate = await stack.client.post('/api/v1/affiliates', affiliateBody);
  t.equal(affiliate.status, 201);
  // A TIN through the API: the affiliate's W-9.
  t.equal((await stack.client.post(taxFormsPath(affiliate.body.id), w9(TIN))).status, 201);
  // A refused key and a malformed body are traced too: neither may leave its value in a span.
  const refusedKey = 'svc_' + 'x'.repeat(43);
  t.equal((await stack.client.withKey(refusedKey).get('/api/v1/affiliates')).status, 401);
  const bad = await stack.client.post('/api/v1/events', { ...eventBody, amount: `not-a-number-${marker}` });
  t.equal(bad.status, 400);
  await eventually(
    async () => (stack.receiver.received.filter((r) => r.body.includes(marker)).length >= 2 ? true : undefined),
    15_000,
    'both webhooks',
  );
  // Every span of the webhook POSTs has been exported once both attempts show in the receiver's spans.
  await eventually(
    async () =>
      stack.otlp.spans.filter((s) => s.name === 'webhook POST' && s.attributes['http.response.status_code'] === 200)
        .length >= 2
        ? true
        : undefined,
    15_000,
    'the webhook POST spans',
  );
  const exported = JSON.stringify(stack.otlp.spans.map((s) => ({ resource: s.resource, span: s.raw })));
  t.ok(stack.otlp.spans.length > 20, `spans to search (${stack.otlp.spans.length})`);
  const forbidden: Record<string, string> = {
    'the API key': stack.key,
    'the refused key': refusedKey,
    'the API key without its prefix': stack.key.slice(4),
    'the webhook secret': stack.endpoint.secret,
    'the webhook secret without its prefix': stack.endpoint.secret.replace(/^whsec_/, ''),
    'the TIN': TIN,
    'the TIN digits': TIN.replace(/-/g, ''),
    'the event body': JSON.stringify(eventBody),
    'a value of the event body': marker,
    'the affiliate body': JSON.stringify(affiliateBody),
    'the bearer header': 'Bearer ',
  };
  for (const [what, value] of Object.entries(forbidden)) t.notOk(exported.includes(value), `no span contains ${what}`);
  t.same(stack.otlp.refused, [], 'every export was JSON to /v1/traces');
});
