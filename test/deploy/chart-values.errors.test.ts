import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { chartValuesSchemaJson } from '../../scripts/chart-schema.ts';
import { CHART, templateChart } from '../helpers/helm.ts';

// values.schema.json stops a bad install before anything reaches the cluster, with the schema's message.
t.setTimeout(60_000);
const DATABASE = { 'secrets.databaseUrl': 'postgres://affiliate@db:5432/affiliate' };

const rejects = async (t: Test, set: Record<string, string>, message: string) => {
  const result = await templateChart(t, { set });
  t.not(result.code, 0, 'helm template fails');
  t.match(result.stderr, "values don't meet the specifications of the schema(s)", 'because of the schema');
  t.match(result.stderr, message);
  t.equal(result.stdout, '', 'and renders nothing');
};

t.test('a value of the wrong type fails with the path and the type', async (t) => {
  await rejects(
    t,
    { ...DATABASE, 'services.gateway.replicas': 'two' },
    "at '/services/gateway/replicas': got string, want integer",
  );
  await rejects(t, { ...DATABASE, 'ingress.enabled': 'yes' }, "at '/ingress/enabled': got string, want boolean");
  await rejects(t, { ...DATABASE, 'ingress.trustProxy': 'true' }, "at '/ingress/trustProxy'");
});

t.test("a service variable outside the service's range fails as the service itself would", async (t) => {
  await rejects(
    t,
    { ...DATABASE, 'services.gateway.env.RPC_TIMEOUT_MS': '10' },
    "at '/services/gateway/env/RPC_TIMEOUT_MS': minimum: got 10, want 50",
  );
  await rejects(t, { ...DATABASE, 'commonEnv.LOG_LEVEL': 'verbose' }, "at '/commonEnv/LOG_LEVEL'");
});

t.test('an unknown top-level value, or a variable the service does not read, fails', async (t) => {
  await rejects(t, { ...DATABASE, replicaCount: '3' }, "at '': additional properties 'replicaCount' not allowed");
  await rejects(
    t,
    { ...DATABASE, 'services.events.env.RPC_TIMEOUT_MS': '5000' },
    "at '/services/events/env': additional properties 'RPC_TIMEOUT_MS' not allowed",
  );
});

t.test('without an existing Secret, the database URL is required', async (t) => {
  await rejects(t, {}, "at '/secrets/databaseUrl'");
  await rejects(
    t,
    { 'secrets.databaseUrl': 'mysql://db/x' },
    "at '/secrets/databaseUrl': 'mysql://db/x' does not match pattern",
  );
  await rejects(t, { ...DATABASE, 'secrets.encryptionKey': 'short' }, "at '/secrets/encryptionKey'");
  const withSecret = await templateChart(t, { set: { 'secrets.existingSecret': 'platform-secrets' } });
  t.equal(withSecret.code, 0, `an existing Secret is enough\n${withSecret.stderr}`);
});

t.test('the committed values.schema.json is the one made from the services configuration schemas', async (t) => {
  t.equal(
    readFileSync(join(CHART, 'values.schema.json'), 'utf8'),
    chartValuesSchemaJson(),
    'run `npm run chart:schema` after changing a service variable',
  );
});

t.test("the chart's README documents every value", async (t) => {
  const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
  const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const leaves: string[] = [];
  const walk = (node: unknown, path: string) => {
    // Maps of free keys (env, annotations, labels) and the NATS chart's own values are documented as a whole.
    if (
      node &&
      typeof node === 'object' &&
      !Array.isArray(node) &&
      !/(env|Env|annotations|labels|Labels|^nats\.\w+|resources|Selector)$/.test(path) &&
      Object.keys(node).length
    ) {
      for (const [key, value] of Object.entries(node)) walk(value, path ? `${path}.${key}` : key);
    } else {
      leaves.push(path.replace(/^services\.[a-z]+\./, 'services.<name>.'));
    }
  };
  walk(values, '');
  for (const leaf of new Set(leaves)) t.ok(readme.includes(`\`${leaf}\``), `${leaf} is in the README's table`);
});
