import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import t from 'tap';
import { PLATFORM_SERVICES, SERVICES } from '../../scripts/services.ts';
import {
  CHART,
  ciValuesFiles,
  helm,
  NATS_CHART_FIXTURE,
  renderableChart,
  renderChart,
  validateObject,
  type K8sObject,
} from '../helpers/helm.ts';
import type { TestLike } from '../helpers/platform.ts';

// The bundled NATS as the official NATS chart renders it from our values (the chart of a 2.x release, kept in the
// tests' fixtures since they have no internet): a 3-server JetStream cluster on file storage, one server per node,
// a disruption budget, and services that replicate every stream and consumer on 3 of them.
t.setTimeout(120_000);

const bundled = ciValuesFiles().find((f) => basename(f) === 'bundled-nats-values.yaml')!;
const minimal = ciValuesFiles().find((f) => basename(f) === 'minimal-values.yaml')!;
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const platformDeployments = (objects: K8sObject[]) =>
  ofKind(objects, 'Deployment').filter((d) => d.metadata.labels?.['app.kubernetes.io/name'] === 'affiliate-platform');
const envValue = (deployment: K8sObject, name: string): string | undefined =>
  (deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[]).find((e) => e.name === name)
    ?.value;
/** Whether the service a Deployment runs reads JETSTREAM_REPLICAS (it creates streams or consumers). */
const readsReplicas = (deployment: K8sObject) =>
  'JETSTREAM_REPLICAS' in
  PLATFORM_SERVICES.find((s) => s.name === deployment.metadata.labels?.['app.kubernetes.io/component'])!.env.properties;
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** `helm dependency list` of the chart with a NATS chart of `version` in charts/: helm's verdict on the range. */
async function dependencyStatus(t: TestLike, version: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'nats-range-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const source = join(dir, 'nats');
  mkdirSync(source);
  writeFileSync(join(source, 'Chart.yaml'), `apiVersion: v2\nname: nats\nversion: ${version}\n`);
  const chart = join(dir, 'affiliate-platform');
  cpSync(CHART, chart, { recursive: true });
  const packaged = await helm(t, ['package', source, '--destination', join(chart, 'charts')]);
  if (packaged.code !== 0) throw new Error(`helm package failed: ${packaged.stderr}`);
  const list = await helm(t, ['dependency', 'list', chart]);
  const row = list.stdout.split('\n').find((line) => line.startsWith('nats'));
  return /\t([a-z ]+?)\s*$/.exec(row ?? '')?.[1] ?? `no status in ${list.stdout}`;
}

t.test(
  "the dependency range admits the NATS charts of the 1.x and 2.x lines, the version of the server's",
  async (t) => {
    for (const version of ['1.3.16', '2.12.1', '2.14.2', '2.99.0'])
      t.equal(await dependencyStatus(t, version), 'ok', `nats ${version}`);
    t.equal(await dependencyStatus(t, '3.0.0'), 'wrong version', 'not a next major version, unseen');
    const fixture = await helm(t, ['dependency', 'list', renderableChart(t, { withNats: true })]);
    t.match(
      fixture.stdout,
      /^nats\s.*\sok\s*$/m,
      `the tests' NATS chart, ${basename(NATS_CHART_FIXTURE)}, is in range`,
    );
  },
);

t.test("bundled NATS: lint passes and every object, the NATS chart's included, is valid Kubernetes", async (t) => {
  const lint = await helm(t, ['lint', '--strict', renderableChart(t, { withNats: true }), '-f', bundled]);
  t.equal(lint.code, 0, `helm lint --strict\n${lint.stdout}${lint.stderr}`);
  const objects = await renderChart(t, { valuesFiles: [bundled], withNats: true });
  for (const object of objects)
    await t.resolves(validateObject(object), `${object.kind} ${object.metadata.name} is valid`);
});

t.test('bundled NATS: 3 servers in a cluster with JetStream on file storage and fsync always', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [bundled], withNats: true });
  const [servers, ...others] = ofKind(objects, 'StatefulSet');
  t.equal(others.length, 0, 'one StatefulSet');
  t.equal(servers!.metadata.name, 'aff-nats', "named as the services' NATS_URL says");
  t.equal(servers!.spec.replicas, 3);
  t.match(servers!.spec.volumeClaimTemplates, [{ spec: { resources: { requests: { storage: '10Gi' } } } }]);
  const config = ofKind(objects, 'ConfigMap').find((c) => c.metadata.name === 'aff-nats-config')!;
  const conf = config.data!['nats.conf']!;
  for (const route of [0, 1, 2]) t.match(conf, `nats://aff-nats-${route}.aff-nats-headless:6222`, `route ${route}`);
  t.match(conf, /"store_dir": "\/data"/, 'JetStream on file storage');
  t.match(conf, /"sync_interval": "always"/, 'fsync before every acknowledgement');
});

t.test('bundled NATS: one server per node, spread over zones, at most one down in a disruption', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [bundled], withNats: true });
  const servers = ofKind(objects, 'StatefulSet')[0]!;
  const podLabels = servers.spec.template.metadata.labels as Record<string, string>;
  const spread = servers.spec.template.spec.topologySpreadConstraints as {
    topologyKey: string;
    maxSkew: number;
    whenUnsatisfiable: string;
    labelSelector: { matchLabels: Record<string, string> };
  }[];
  t.match(
    spread.map(({ topologyKey, maxSkew, whenUnsatisfiable }) => ({ topologyKey, maxSkew, whenUnsatisfiable })),
    [
      { topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' },
      { topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' },
    ],
  );
  for (const constraint of spread)
    t.ok(selects(constraint.labelSelector.matchLabels, podLabels), `${constraint.topologyKey}: counts the servers`);
  const budgets = ofKind(objects, 'PodDisruptionBudget').filter((p) => selects(p.spec.selector.matchLabels, podLabels));
  t.equal(budgets.length, 1, "a PodDisruptionBudget over the servers' pods");
  t.equal(budgets[0]!.spec.maxUnavailable, 1, 'a quorum of 2 out of 3 stays up');
});

t.test("bundled NATS: the services replicate on 3 servers; the platform's pods spread and budgeted", async (t) => {
  const objects = await renderChart(t, { valuesFiles: [bundled], withNats: true });
  const deployments = platformDeployments(objects);
  t.equal(deployments.length, SERVICES.length);
  t.ok(deployments.filter(readsReplicas).length >= 4, 'the services that create streams and consumers');
  for (const deployment of deployments) {
    const name = deployment.metadata.name;
    t.equal(
      envValue(deployment, 'JETSTREAM_REPLICAS'),
      readsReplicas(deployment) ? '3' : undefined,
      `${name}: JETSTREAM_REPLICAS, where its config schema reads it`,
    );
    const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
    const budgets = ofKind(objects, 'PodDisruptionBudget').filter((p) =>
      selects(p.spec.selector.matchLabels, podLabels),
    );
    t.equal(budgets.length, 1, `${name}: a PodDisruptionBudget of its own`);
    const spread = deployment.spec.template.spec.topologySpreadConstraints as {
      topologyKey: string;
      labelSelector: { matchLabels: Record<string, string> };
    }[];
    t.same(
      spread.map((c) => c.topologyKey),
      ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'],
      `${name}: spread over nodes and zones`,
    );
    for (const c of spread) t.ok(selects(c.labelSelector.matchLabels, podLabels), `${name}: ${c.topologyKey}`);
  }
  const single = await renderChart(t, { valuesFiles: [bundled], set: { 'nats.config.cluster.enabled': 'false' } });
  for (const deployment of platformDeployments(single).filter(readsReplicas))
    t.equal(envValue(deployment, 'JETSTREAM_REPLICAS'), '1', `${deployment.metadata.name}: one server, one replica`);
  const external = await renderChart(t, { valuesFiles: [minimal] });
  for (const deployment of platformDeployments(external))
    t.equal(envValue(deployment, 'JETSTREAM_REPLICAS'), undefined, `${deployment.metadata.name}: external NATS`);
});
