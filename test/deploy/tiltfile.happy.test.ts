import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { helm, renderableChart, renderChart, validateObject, type K8sObject } from '../helpers/helm.ts';
import { ROOT } from '../helpers/platform.ts';

// `tilt up` cannot run here (no cluster), so the Tiltfile is checked against what it names: the paths exist, the
// resources it configures are the ones the chart and the dev manifests make, and those render and validate.
t.setTimeout(60_000);

const tiltfile = readFileSync(join(ROOT, 'Tiltfile'), 'utf8');
const code = tiltfile.replace(/#.*$/gm, '');
const constant = (name: string) => new RegExp(`^${name} = '([^']+)'`, 'm').exec(code)?.[1];
const APP = constant('APP')!;
const RELEASE = constant('RELEASE')!;
const devValues = parse(readFileSync(join(ROOT, 'deploy/dev/values.yaml'), 'utf8')) as {
  image: { repository: string };
  gateway?: { port: number };
};

t.test('every path the Tiltfile names exists', async (t) => {
  t.equal(APP, '.tilt/app', 'the layout goes to an ignored folder');
  t.match(readFileSync(join(ROOT, '.gitignore'), 'utf8'), /^\.tilt\/$/m);
  const paths = [...code.matchAll(/'([^' ]+\/[^' ]*|package(-lock)?\.json|services|scripts)'/g)]
    .map((m) => m[1]!)
    .filter((p) => !p.startsWith('/') && !p.startsWith(APP));
  t.ok(paths.length >= 8, `${paths.length} paths`);
  for (const path of paths) t.ok(existsSync(join(ROOT, path)), `${path} exists`);
});

t.test('the image is built from the layout script, live-updated by syncing the bundles', async (t) => {
  t.match(code, `cmd='npm run -s image:layout -- ' + APP`);
  t.match(
    code,
    new RegExp(`docker_build\\(\\s*'${devValues.image.repository}',\\s*APP,\\s*dockerfile='deploy/dev/Dockerfile'`),
    'the image the dev values run',
  );
  t.match(code, `sync(APP + '/dist', '/app/dist')`);
  const dockerfile = readFileSync(join(ROOT, 'deploy/dev/Dockerfile'), 'utf8');
  const pinned = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  ).devDependencies['node']!;
  t.match(dockerfile, `ARG NODE_VERSION=${pinned}`);
  t.match(dockerfile, /^WORKDIR \/app$/m, 'the layout lands where the sync writes');
  t.match(
    code,
    /local_resource\('tests', cmd='npm test', trigger_mode=TRIGGER_MODE_MANUAL/,
    'the tests as a manual resource',
  );
});

t.test("the resources the Tiltfile configures are the chart's and the dev manifests' workloads", async (t) => {
  t.match(code, `helm('charts/affiliate-platform', name=RELEASE, values=['deploy/dev/values.yaml'])`);
  const lint = await helm(t, ['lint', '--strict', renderableChart(t), '-f', join(ROOT, 'deploy/dev/values.yaml')]);
  t.equal(lint.code, 0, `the dev values lint\n${lint.stdout}${lint.stderr}`);
  const chart = await renderChart(t, { valuesFiles: [join(ROOT, 'deploy/dev/values.yaml')], release: RELEASE });
  const manifests = ['deploy/dev/postgres.yaml', 'deploy/dev/nats.yaml'].flatMap((file) =>
    parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map((doc) => doc.toJS() as K8sObject),
  );
  for (const object of [...chart, ...manifests])
    await t.resolves(validateObject(object), `${object.kind} ${object.metadata.name} is valid`);
  const workloads = [...chart, ...manifests]
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .map((o) => o.metadata.name);
  const configured = [...code.matchAll(/k8s_resource\('([^']+)'/g)].map((m) => m[1]!);
  t.same([...configured].sort(), [...workloads].sort(), 'one k8s_resource per workload, each of them real');
  const gatewayForward = /k8s_resource\('[a-z-]+-gateway', port_forwards=\['8080:(\d+)'/.exec(code)?.[1];
  const gateway = chart.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-gateway'))!;
  const http = gateway.spec.template.spec.containers[0].ports.find((p: { name: string }) => p.name === 'http');
  t.equal(Number(gatewayForward), http.containerPort, "localhost:8080 forwards to the gateway's HTTP port");
  const command = gateway.spec.template.spec.containers[0].command as string[];
  t.ok(command.includes('--watch'), 'synced bundles restart the service');
  t.equal(
    gateway.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem,
    false,
    'the sync can write /app/dist',
  );
  const natsUrl = gateway.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'NATS_URL')
    .value as string;
  t.equal(natsUrl, 'nats://nats:4222', 'the dev NATS Service');
  t.ok(
    manifests.some((o) => o.kind === 'Service' && o.metadata.name === 'nats'),
    'which deploy/dev/nats.yaml makes',
  );
});
