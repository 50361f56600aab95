import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { OBSERVABILITY_COPIES } from '../../scripts/chart-observability.ts';
import { ciValuesFiles, helm, renderableChart, renderChart, validateObject, type K8sObject } from '../helpers/helm.ts';
import { ROOT } from '../helpers/platform.ts';

// The operator kit in the chart: the PrometheusRule and the Grafana dashboard ConfigMap render the files of
// deploy/observability exactly (the chart's copies are those files), only when asked, valid for the Prometheus
// Operator and Grafana's sidecar; the ServiceMonitor keeps the services' own `service` label.
t.setTimeout(120_000);

const KIT = join(ROOT, 'deploy/observability');
const production = ciValuesFiles().find((f) => basename(f) === 'production-values.yaml')!;
const minimal = ciValuesFiles().find((f) => basename(f) === 'minimal-values.yaml')!;
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);

t.test("the chart's copies of the rules and the dashboard are deploy/observability's files", async (t) => {
  for (const { source, copy } of OBSERVABILITY_COPIES) {
    t.equal(
      readFileSync(copy, 'utf8'),
      readFileSync(source, 'utf8'),
      `${basename(copy)}: run \`npm run chart:observability\` after changing ${basename(source)}`,
    );
  }
});

t.test('by default: neither a PrometheusRule nor a dashboard ConfigMap', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [minimal] });
  t.same(ofKind(objects, 'PrometheusRule'), []);
  t.same(ofKind(objects, 'ConfigMap'), []);
});

t.test('the PrometheusRule holds the alert rules file as written, labelled for the Prometheus', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [production] });
  const rules = ofKind(objects, 'PrometheusRule');
  t.equal(rules.length, 1, 'one PrometheusRule');
  const rule = rules[0]!;
  await t.resolves(validateObject(rule), 'valid for @kubernetes-models/prometheus-operator');
  t.equal(rule.metadata.labels?.['release'], 'kube-prometheus-stack', 'the extra label');
  t.equal(rule.metadata.labels?.['app.kubernetes.io/instance'], 'aff', "the chart's own labels");
  const file = parseYaml(readFileSync(join(KIT, 'alerts.rules.yml'), 'utf8')) as { groups: unknown };
  t.same(rule.spec, file, 'spec is the rules file');
  const errorRate = rule.spec.groups[0].rules.find((r: { alert: string }) => r.alert === 'AffiliateApiErrorRate');
  t.match(errorRate.annotations.summary, /\{\{ \$labels\.route \}\}/, "Prometheus's templates are left to Prometheus");
});

t.test("the dashboard ConfigMap carries the dashboard and the sidecar's label", async (t) => {
  const objects = await renderChart(t, { valuesFiles: [production] });
  const maps = ofKind(objects, 'ConfigMap');
  t.equal(maps.length, 1, 'one ConfigMap');
  const map = maps[0]!;
  await t.resolves(validateObject(map), 'a valid ConfigMap');
  t.equal(map.metadata.labels?.['grafana_dashboard'], '1', "the Grafana sidecar's label");
  t.equal(map.metadata.annotations?.['grafana_folder'], 'Affiliate platform', 'the annotations from values');
  t.same(
    Object.keys(map.data!),
    ['affiliate-platform.json'],
    'one dashboard file, named as the sidecar writes it to disk',
  );
  t.same(
    JSON.parse(map.data!['affiliate-platform.json']!),
    JSON.parse(readFileSync(join(KIT, 'dashboard.json'), 'utf8')),
    'the dashboard of deploy/observability',
  );
});

t.test('each can be turned on alone, and the chart lints with both', async (t) => {
  const onlyRule = await renderChart(t, { valuesFiles: [minimal], set: { 'metrics.prometheusRule.enabled': 'true' } });
  t.equal(ofKind(onlyRule, 'PrometheusRule').length, 1);
  t.equal(ofKind(onlyRule, 'ConfigMap').length, 0);
  const onlyDashboard = await renderChart(t, {
    valuesFiles: [minimal],
    set: { 'metrics.grafanaDashboard.enabled': 'true' },
  });
  t.equal(ofKind(onlyDashboard, 'PrometheusRule').length, 0);
  t.equal(ofKind(onlyDashboard, 'ConfigMap').length, 1);
  const lint = await helm(t, ['lint', '--strict', renderableChart(t), '-f', production]);
  t.equal(lint.code, 0, `helm lint --strict\n${lint.stdout}${lint.stderr}`);
});

t.test(
  "the ServiceMonitor keeps the services' `service` label (the rules and the dashboard group by it)",
  async (t) => {
    const objects = await renderChart(t, { valuesFiles: [production] });
    const monitor = ofKind(objects, 'ServiceMonitor')[0]!;
    t.same(
      monitor.spec.endpoints.map((e: { honorLabels?: boolean }) => e.honorLabels),
      [true],
    );
  },
);

t.test('values.schema.json refuses unknown keys under the new values', async (t) => {
  const result = await helm(t, [
    'template',
    'aff',
    renderableChart(t),
    '-f',
    minimal,
    '--set',
    'metrics.prometheusRule.enabeld=true',
  ]);
  t.not(result.code, 0, 'a misspelt key fails the install');
  t.match(result.stderr, /enabeld/, 'naming the key');
});
