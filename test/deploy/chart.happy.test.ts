import { basename } from 'node:path';
import t from 'tap';
import { PLATFORM_SERVICES, SERVICES } from '../../scripts/services.ts';
import { serviceNodeArgs } from '../../scripts/runtime.ts';
import {
  CHART,
  ciValuesFiles,
  helm,
  renderableChart,
  renderChart,
  renderUpgrade,
  validateObject,
  type K8sObject,
} from '../helpers/helm.ts';

// The Helm chart as `helm lint` and `helm template` see it with each of its CI values files, every object checked
// against the Kubernetes schemas, and the promises a platform engineer relies on checked object by object.
t.setTimeout(120_000);

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
const deployments = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'Deployment');
const deploymentOf = (objects: K8sObject[], service: string) =>
  deployments(objects).find((d) => d.metadata.labels?.['app.kubernetes.io/component'] === service);
const containerOf = (deployment: K8sObject) => deployment.spec.template.spec.containers[0];
const envOf = (deployment: K8sObject): Map<string, Env> =>
  new Map((containerOf(deployment).env as Env[]).map((e) => [e.name, e]));
const valuesFile = (name: string) => ciValuesFiles().find((f) => basename(f) === `${name}-values.yaml`)!;

t.test('the chart has the CI values files the issue asks for', async (t) => {
  t.same(
    ciValuesFiles().map((f) => basename(f)),
    ['bundled-nats-values.yaml', 'gitops-values.yaml', 'minimal-values.yaml', 'production-values.yaml'],
  );
});

for (const file of ciValuesFiles()) {
  t.test(`${basename(file)}: helm lint --strict passes and every rendered object is valid Kubernetes`, async (t) => {
    const lint = await helm(t, ['lint', '--strict', renderableChart(t), '-f', file]);
    t.equal(lint.code, 0, `helm lint --strict\n${lint.stdout}${lint.stderr}`);
    const objects = await renderChart(t, { valuesFiles: [file] });
    t.ok(objects.length > 10, `${objects.length} objects rendered`);
    for (const object of objects) {
      await t.resolves(validateObject(object), `${object.kind} ${object.metadata.name} is valid`);
    }
  });

  t.test(
    `${basename(file)}: every service runs locked down, probed on its ops port, with variables it knows`,
    async (t) => {
      const objects = await renderChart(t, { valuesFiles: [file] });
      t.same(
        deployments(objects)
          .map((d) => d.metadata.labels?.['app.kubernetes.io/component'])
          .sort(),
        [...SERVICES].sort(),
        'a Deployment per service',
      );
      for (const service of SERVICES) {
        const deployment = deploymentOf(objects, service)!;
        const pod = deployment.spec.template.spec;
        const container = containerOf(deployment);
        const env = envOf(deployment);
        t.match(
          pod.securityContext,
          { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          `${service}: pod security`,
        );
        t.ok(pod.securityContext.runAsUser > 0, `${service}: runs as a non-root user id`);
        t.same(
          container.securityContext,
          {
            runAsNonRoot: true,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          },
          `${service}: container security`,
        );
        const opsPort = Number(env.get('OPS_PORT')?.value);
        t.ok(opsPort > 0, `${service}: OPS_PORT is set`);
        t.match(
          container.startupProbe,
          { httpGet: { path: '/readyz', port: opsPort } },
          `${service}: startup probe on the ops port`,
        );
        t.match(
          container.readinessProbe,
          { httpGet: { path: '/readyz', port: opsPort } },
          `${service}: readiness probe on the ops port`,
        );
        t.match(
          container.livenessProbe,
          { httpGet: { path: '/healthz', port: opsPort } },
          `${service}: liveness probe on the ops port`,
        );
        t.ok(container.resources?.requests?.cpu && container.resources?.limits?.memory, `${service}: resources`);
        t.equal(pod.topologySpreadConstraints?.length, 2, `${service}: spread over nodes and zones`);
        t.same(
          container.command,
          ['node', ...serviceNodeArgs(service), `dist/${service}/main.js`],
          `${service}: its bundle with the flags of scripts/runtime.ts`,
        );
        const known = Object.keys(PLATFORM_SERVICES.find((s) => s.name === service)!.env.properties);
        for (const name of env.keys())
          t.ok(known.includes(name), `${service}: ${name} is a variable its config schema reads`);
        for (const name of ['DATABASE_URL', 'ENCRYPTION_KEY'])
          t.ok(env.get(name)?.valueFrom?.secretKeyRef, `${service}: ${name} from the Secret`);
      }
    },
  );
}

t.test('minimal install: a generated encryption key, PDBs, no HPA, no Ingress, the migrations as a hook', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [valuesFile('minimal')] });
  const secret = objects.find((o) => o.kind === 'Secret')!;
  t.equal(
    Buffer.from(Buffer.from(secret.data!['ENCRYPTION_KEY']!, 'base64').toString(), 'base64').length,
    32,
    'a 32-byte key',
  );
  t.equal(
    Buffer.from(secret.data!['DATABASE_URL']!, 'base64').toString(),
    'postgres://affiliate:secret@postgres.platform.svc:5432/affiliate',
  );
  t.equal(secret.metadata.annotations?.['helm.sh/resource-policy'], 'keep', 'the key survives uninstall');
  t.equal(objects.filter((o) => o.kind === 'PodDisruptionBudget').length, SERVICES.length);
  t.equal(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler').length, 0);
  t.equal(objects.filter((o) => o.kind === 'Ingress').length, 0);
  for (const d of deployments(objects)) t.equal(d.spec.replicas, 2, `${d.metadata.name}: replicas from values`);
  const gateway = envOf(deploymentOf(objects, 'gateway')!);
  t.equal(gateway.get('TRUST_PROXY'), undefined, 'no proxy is trusted without an Ingress');
  const behindIngress = await renderChart(t, {
    valuesFiles: [valuesFile('minimal')],
    set: { 'ingress.enabled': 'true' },
  });
  t.equal(
    envOf(deploymentOf(behindIngress, 'gateway')!).get('TRUST_PROXY')?.value,
    '1',
    'with an Ingress, one hop by default (never true, every hop)',
  );
  t.equal(gateway.get('NATS_URL')?.value, 'nats://nats:4222', 'the external NATS');
  const job = objects.find((o) => o.kind === 'Job')!;
  t.equal(job.metadata.annotations?.['helm.sh/hook'], 'pre-install,pre-upgrade');
  t.equal(
    secret.metadata.annotations?.['helm.sh/hook'],
    'pre-install,pre-upgrade',
    'the Secret exists before the hook Job',
  );
  t.ok(
    Number(secret.metadata.annotations?.['helm.sh/hook-weight']) <
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    'and is made first',
  );
  t.same(job.spec.template.spec.containers[0].command, ['node', 'dist/migrate/main.js']);
  t.equal(job.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem, true);
});

t.test(
  'production install: Ingress with TLS, proxy trusted, HPAs, external secret and NATS, policies, scraping',
  async (t) => {
    const objects = await renderChart(t, { valuesFiles: [valuesFile('production')] });
    t.equal(objects.filter((o) => o.kind === 'Secret').length, 0, 'no Secret: the existing one is used');
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    t.same(
      hpas.map((h) => h.spec.scaleTargetRef.name).sort(),
      SERVICES.map((s) => `aff-affiliate-platform-${s}`).sort(),
      'an HPA per service',
    );
    t.match(hpas.find((h) => h.metadata.name.endsWith('-gateway'))!.spec, {
      minReplicas: 3,
      maxReplicas: 20,
      metrics: [{ resource: { name: 'cpu', target: { averageUtilization: 65 } } }],
    });
    for (const d of deployments(objects))
      t.equal(d.spec.replicas, undefined, `${d.metadata.name}: replicas left to the HPA`);
    const ingress = objects.find((o) => o.kind === 'Ingress')!;
    t.match(ingress.spec, {
      ingressClassName: 'nginx',
      tls: [{ hosts: ['api.affiliates.example.com'], secretName: 'api-affiliates-tls' }],
    });
    t.equal(ingress.spec.rules[0].http.paths[0].backend.service.name, 'aff-affiliate-platform-gateway');
    const gateway = deploymentOf(objects, 'gateway')!;
    t.equal(
      envOf(gateway).get('TRUST_PROXY')?.value,
      '10.0.0.0/8',
      'behind the Ingress, the gateway trusts the configured proxies (ingress.trustProxy)',
    );
    t.equal(envOf(gateway).get('TRACKING_RATE_LIMIT_PER_MIN')?.value, '240', "a service's own variable from values");
    t.equal(envOf(gateway).get('DATABASE_URL')?.valueFrom?.secretKeyRef?.name, 'affiliate-platform-secrets');
    t.equal(envOf(gateway).get('NATS_URL')?.value, 'nats://nats.messaging.svc:4222');
    for (const service of ['gateway', 'affiliates', 'commissions']) {
      t.equal(
        envOf(deploymentOf(objects, service)!).get('PUBLIC_BASE_URL')?.value,
        'https://api.affiliates.example.com',
        `${service}: referral links and the OpenAPI server on the public host`,
      );
    }
    t.same(gateway.spec.template.spec.imagePullSecrets, [{ name: 'registry-credentials' }]);
    t.equal(containerOf(gateway).image, 'registry.example.com/affiliate-platform:0.1.0');
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    t.equal(policies.length, SERVICES.length, 'a NetworkPolicy per service');
    const dispatcher = policies.find((p) => p.metadata.name.endsWith('-dispatcher'))!;
    t.same(dispatcher.spec.policyTypes, ['Ingress', 'Egress']);
    const internet = dispatcher.spec.egress.find((rule: { to?: { ipBlock?: { cidr: string } }[] }) =>
      rule.to?.some((p) => p.ipBlock?.cidr === '0.0.0.0/0'),
    );
    t.same(
      internet.to[0].ipBlock.except,
      ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'],
      'the internet but not private ranges',
    );
    const events = policies.find((p) => p.metadata.name.endsWith('-events'))!;
    t.same(events.spec.policyTypes, ['Ingress'], 'services other than the dispatcher keep their egress');
    t.same(
      events.spec.ingress[0].from[0].podSelector.matchLabels['app.kubernetes.io/component'],
      'gateway',
      'traffic from the gateway',
    );
    t.same(events.spec.ingress[1].ports, [{ port: 9102, protocol: 'TCP' }], 'and the scraper on the ops port only');
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor')!;
    t.same(monitor.metadata.labels?.['release'], 'kube-prometheus-stack');
    const opsServices = objects.filter(
      (o) =>
        o.kind === 'Service' &&
        o.metadata.labels?.['app.kubernetes.io/part-of'] ===
          monitor.spec.selector.matchLabels['app.kubernetes.io/part-of'],
    );
    t.equal(opsServices.length, SERVICES.length, 'the ServiceMonitor selects every ops Service');
  },
);

t.test(
  'GitOps install: no hook annotation anywhere, and a new migrations Job for each revision and each image',
  async (t) => {
    const objects = await renderChart(t, { valuesFiles: [valuesFile('gitops')] });
    for (const object of objects) {
      const hooks = Object.keys(object.metadata.annotations ?? {}).filter((a) => a.startsWith('helm.sh/hook'));
      t.same(hooks, [], `${object.kind} ${object.metadata.name} has no hook annotation`);
    }
    const jobName = (objects: K8sObject[]) => objects.find((o) => o.kind === 'Job')!.metadata.name;
    t.match(jobName(objects), /^aff-affiliate-platform-migrate-1-[0-9a-f]{8}$/, 'helm template renders revision 1');
    const fifth = await renderUpgrade(t, { fromRevision: 4, valuesFiles: [valuesFile('gitops')] });
    const sixth = await renderUpgrade(t, { fromRevision: 5, valuesFiles: [valuesFile('gitops')] });
    t.match(jobName(fifth), /^aff-affiliate-platform-migrate-5-[0-9a-f]{8}$/, 'an upgrade to revision 5');
    t.match(jobName(sixth), /^aff-affiliate-platform-migrate-6-[0-9a-f]{8}$/, 'the next upgrade: another Job');
    t.same(
      fifth.filter((o) => o.metadata.annotations?.['helm.sh/hook']),
      [],
      'the upgrade runs no hooks either',
    );
    // GitOps tools render every revision as revision 1: the image tells one version's Job from the next.
    const newImage = await renderChart(t, { valuesFiles: [valuesFile('gitops')], set: { 'image.tag': '0.2.0' } });
    t.not(jobName(newImage), jobName(objects), 'a new image: a new Job name');
  },
);

t.test('bundled NATS: the services use the NATS chart of the release', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [valuesFile('bundled-nats')] });
  for (const service of SERVICES)
    t.equal(envOf(deploymentOf(objects, service)!).get('NATS_URL')?.value, 'nats://aff-nats:4222', service);
  const named = await renderChart(t, { valuesFiles: [valuesFile('bundled-nats')], release: 'nats-prod' });
  t.equal(
    envOf(deploymentOf(named, 'gateway')!).get('NATS_URL')?.value,
    'nats://nats-prod:4222',
    "the NATS chart's own naming rule",
  );
});

t.test(
  'the NATS dependency is the official chart with JetStream on file storage, 3 replicas and fsync always',
  async (t) => {
    const { parse } = await import('yaml');
    const { readFileSync } = await import('node:fs');
    const chart = parse(readFileSync(`${CHART}/Chart.yaml`, 'utf8')) as {
      dependencies: { name: string; repository: string; condition: string }[];
    };
    t.match(chart.dependencies, [
      { name: 'nats', repository: 'https://nats-io.github.io/k8s/helm/charts/', condition: 'nats.enabled' },
    ]);
    const values = parse(readFileSync(`${CHART}/values.yaml`, 'utf8')) as { nats: unknown };
    t.match(values.nats, {
      enabled: false,
      config: {
        cluster: { enabled: true, replicas: 3 },
        jetstream: { enabled: true, fileStore: { enabled: true }, merge: { sync_interval: 'always' } },
      },
    });
  },
);

t.test(
  'a key rotation: the previous keys reach every service from the Secret, and only while they are set',
  async (t) => {
    const previous = Buffer.alloc(32, 7).toString('base64');
    const rotating = await renderChart(t, {
      valuesFiles: [valuesFile('minimal')],
      set: { 'secrets.encryptionKeysPrevious': previous },
    });
    const secret = rotating.find((o) => o.kind === 'Secret')!;
    t.equal(Buffer.from(secret.data!['ENCRYPTION_KEYS_PREVIOUS']!, 'base64').toString(), previous);
    for (const service of SERVICES) {
      t.same(
        envOf(deploymentOf(rotating, service)!).get('ENCRYPTION_KEYS_PREVIOUS')?.valueFrom?.secretKeyRef,
        { name: secret.metadata.name, key: 'ENCRYPTION_KEYS_PREVIOUS', optional: true },
        service,
      );
    }
    const settled = await renderChart(t, { valuesFiles: [valuesFile('minimal')] });
    t.equal(
      settled.find((o) => o.kind === 'Secret')!.data!['ENCRYPTION_KEYS_PREVIOUS'],
      undefined,
      'no previous key once the rotation is over',
    );
  },
);
