import { basename } from 'node:path';
import t from 'tap';
import { SERVICES } from '../../scripts/services.ts';
import { ciValuesFiles, renderChart, type K8sObject } from '../helpers/helm.ts';

// Who may open a connection to the bundled NATS servers and to Postgres once the chart's NetworkPolicies apply. The
// rendered policies are evaluated as Kubernetes does for ingress (a pod selected by no policy takes everything; else
// a rule must admit both the peer and the port) against the pods the release runs and pods it does not: anything in
// the cluster that reached NATS could read requests in transit or publish commands.
t.setTimeout(120_000);

type Labels = Record<string, string>;
interface Pod {
  name: string;
  namespace: string;
  labels: Labels;
}
interface Peer {
  podSelector?: { matchLabels?: Labels };
  namespaceSelector?: { matchLabels?: Labels };
  ipBlock?: unknown;
}
interface Rule {
  from?: Peer[];
  ports?: { port?: number | string; protocol?: string }[];
}
const NAMESPACE = 'platform';
const selects = (selector: Labels | undefined, labels: Labels) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
const namespaceLabels = (namespace: string): Labels => ({ 'kubernetes.io/metadata.name': namespace });

function peerMatches(peer: Peer, source: Pod): boolean {
  if (peer.ipBlock) return false; // the cluster's pods are not addressed by the policies' CIDRs here
  if (peer.namespaceSelector) {
    if (!selects(peer.namespaceSelector.matchLabels, namespaceLabels(source.namespace))) return false;
  } else if (source.namespace !== NAMESPACE) return false;
  return !peer.podSelector || selects(peer.podSelector.matchLabels, source.labels);
}

/** Whether `source` may connect to `target` on `port` under the NetworkPolicies among `objects`. */
function admitted(objects: K8sObject[], source: Pod, target: Pod, port: number): boolean {
  const policies = objects.filter(
    (o) =>
      o.kind === 'NetworkPolicy' &&
      (o.spec.policyTypes as string[]).includes('Ingress') &&
      selects(o.spec.podSelector.matchLabels, target.labels),
  );
  if (policies.length === 0) return true;
  return policies.some((policy) =>
    ((policy.spec.ingress ?? []) as Rule[]).some(
      (rule) =>
        (!rule.ports || rule.ports.some((p) => p.port === port)) &&
        (!rule.from || rule.from.some((peer) => peerMatches(peer, source))),
    ),
  );
}

/** The pods of the release's workloads (Deployments, StatefulSets, Jobs and bare Pods), by their template labels. */
const releasePods = (objects: K8sObject[]): Pod[] =>
  objects.flatMap((o): Pod[] => {
    if (o.kind === 'Pod') return [{ name: o.metadata.name, namespace: NAMESPACE, labels: o.metadata.labels ?? {} }];
    if (!['Deployment', 'StatefulSet', 'Job'].includes(o.kind)) return [];
    return [{ name: `${o.kind}/${o.metadata.name}`, namespace: NAMESPACE, labels: o.spec.template.metadata.labels }];
  });
const platformPods = (objects: K8sObject[]) =>
  releasePods(objects).filter((p) => p.labels['app.kubernetes.io/name'] === 'affiliate-platform');

const strangers: Pod[] = [
  { name: 'a pod of another application', namespace: NAMESPACE, labels: { app: 'curious' } },
  {
    name: "another release's gateway",
    namespace: NAMESPACE,
    labels: {
      'app.kubernetes.io/name': 'affiliate-platform',
      'app.kubernetes.io/instance': 'other',
      'app.kubernetes.io/component': 'gateway',
    },
  },
  { name: 'a pod in another namespace', namespace: 'elsewhere', labels: { 'app.kubernetes.io/instance': 'aff' } },
];
const scraper: Pod = { name: 'the metrics scraper', namespace: 'monitoring', labels: { app: 'prometheus' } };

const bundled = ciValuesFiles().find((f) => basename(f) === 'bundled-nats-values.yaml')!;
const policed = { 'networkPolicy.enabled': 'true' };

t.test("only the platform's pods, and the NATS chart's own, reach the NATS servers' client port", async (t) => {
  const objects = await renderChart(t, { valuesFiles: [bundled], set: policed, withNats: true });
  const server = releasePods(objects).find((p) => p.name === 'StatefulSet/aff-nats')!;
  t.ok(server, 'the NATS servers are rendered');
  const clients = platformPods(objects);
  t.same(
    clients.map((p) => p.labels['app.kubernetes.io/component']).sort(),
    [...SERVICES, 'migrations'].sort(),
    "the platform's pods: every service and the migrations Job",
  );
  for (const client of clients) t.ok(admitted(objects, client, server, 4222), `${client.name} reaches 4222`);
  const natsBox = releasePods(objects).find((p) => p.labels['app.kubernetes.io/component'] === 'nats-box')!;
  t.ok(admitted(objects, natsBox, server, 4222), "the NATS chart's nats-box, an operator's shell, reaches 4222");
  for (const stranger of [...strangers, scraper])
    t.notOk(admitted(objects, stranger, server, 4222), `${stranger.name} does not reach 4222`);
  t.ok(admitted(objects, server, server, 6222), 'the servers route to each other');
  for (const client of [...clients, natsBox, ...strangers])
    t.notOk(admitted(objects, client, server, 6222), `${client.name} does not reach the route port`);
  t.ok(admitted(objects, scraper, server, 8222), 'the metrics scraper reaches the monitoring port');
  t.notOk(admitted(objects, strangers[0]!, server, 8222), 'no one else does');
});

t.test('more NATS clients only through networkPolicy.nats.extraIngress', async (t) => {
  const objects = await renderChart(t, {
    valuesFiles: [bundled],
    set: {
      ...policed,
      'networkPolicy.nats.extraIngress[0].from[0].podSelector.matchLabels.app': 'reporting',
      'networkPolicy.nats.extraIngress[0].ports[0].port': '4222',
    },
  });
  const server: Pod = {
    name: 'a NATS server',
    namespace: NAMESPACE,
    labels: {
      'app.kubernetes.io/name': 'nats',
      'app.kubernetes.io/instance': 'aff',
      'app.kubernetes.io/component': 'nats',
    },
  };
  const reporting: Pod = { name: 'reporting', namespace: NAMESPACE, labels: { app: 'reporting' } };
  t.ok(admitted(objects, reporting, server, 4222), 'the pod the rule names');
  t.notOk(admitted(objects, reporting, server, 6222), 'on the rule’s port only');
  t.notOk(admitted(objects, strangers[0]!, server, 4222), 'and no other');
});

t.test(
  "a Postgres in the namespace, named by networkPolicy.postgres.podSelector, takes the platform's pods only",
  async (t) => {
    const postgresLabels = { 'cnpg.io/cluster': 'affiliates' };
    const objects = await renderChart(t, {
      valuesFiles: [bundled],
      set: {
        ...policed,
        'networkPolicy.postgres.podSelector.cnpg\\.io/cluster': 'affiliates',
        'networkPolicy.postgres.extraIngress[0].from[0].podSelector.matchLabels.app': 'backup',
        'networkPolicy.postgres.extraIngress[0].ports[0].port': '5432',
      },
    });
    const postgres: Pod = { name: 'a Postgres instance', namespace: NAMESPACE, labels: postgresLabels };
    for (const client of platformPods(objects))
      t.ok(admitted(objects, client, postgres, 5432), `${client.name} reaches Postgres`);
    t.ok(admitted(objects, { ...postgres, name: 'a standby' }, postgres, 5432), 'its standbys replicate from it');
    const backup: Pod = { name: 'a backup job', namespace: NAMESPACE, labels: { app: 'backup' } };
    t.ok(admitted(objects, backup, postgres, 5432), 'a client its extraIngress names');
    for (const stranger of [...strangers, scraper])
      t.notOk(admitted(objects, stranger, postgres, 5432), `${stranger.name} does not reach Postgres`);

    const unnamed = await renderChart(t, { valuesFiles: [bundled], set: policed });
    t.notOk(
      unnamed.some((o) => o.kind === 'NetworkPolicy' && o.metadata.name.endsWith('-postgres')),
      'no Postgres policy without its pods named (an external Postgres is closed by its own firewall)',
    );
  },
);

t.test('without networkPolicy.enabled, no backend policy is rendered', async (t) => {
  const objects = await renderChart(t, {
    valuesFiles: [bundled],
    set: { 'networkPolicy.postgres.podSelector.app': 'postgres' },
  });
  t.same(
    objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name),
    [],
  );
});
