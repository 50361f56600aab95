import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { PLATFORM_SERVICES } from '../../scripts/services.ts';
import { helm, renderableChart, renderChart, validateObject, type K8sObject } from '../helpers/helm.ts';
import { ROOT } from '../helpers/platform.ts';

// `tilt up` cannot run here (no cluster), so the Tiltfile is checked against what it names: the paths exist, the
// resources it configures are the ones the chart and the dev manifests make, and those render and validate. The
// services' resources come from the registry (scripts/services.ts) by the command the Tiltfile runs, so that command
// is run here and the Tiltfile's loop over its answer is read as Tilt would evaluate it.
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

/** What the Tiltfile's `local(...)` prints, run as Tilt runs it: by the shell, in the Tiltfile's folder. */
const registryCommand = /^SERVICES = decode_json\(str\(local\('([^']+)', quiet=True\)\)\)$/m.exec(code)?.[1];
const registry = registryCommand
  ? (JSON.parse(execSync(registryCommand, { cwd: ROOT, encoding: 'utf8' })) as {
      name: string;
      httpPort: number | null;
      opsPort: number;
    }[])
  : [];
/** The resources the Tiltfile configures: those it names, and one per service in its loop over the registry. */
const loop = /^for service in SERVICES:\n {4}k8s_resource\(\n {8}RELEASE \+ '-' \+ service\['name'\],$/m.test(code);
const configured = [
  ...[...code.matchAll(/k8s_resource\('([^']+)'/g)].map((m) => m[1]!),
  ...(loop ? registry.map((service) => `${RELEASE}-${service.name}`) : []),
];

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

t.test('the Tiltfile declares a resource for every service of the registry', async (t) => {
  t.ok(registryCommand, 'it reads the registry with a command');
  t.match(code, /^watch_file\('scripts\/services\.ts'\)$/m, 'and reloads when the registry changes');
  t.same(
    registry,
    PLATFORM_SERVICES.map(({ name, httpPort, opsPort }) => ({ name, httpPort, opsPort })),
    'the command prints every service of the registry, in its order',
  );
  t.ok(loop, 'one k8s_resource per service it printed, named as the chart names the Deployment');
  for (const { name } of PLATFORM_SERVICES)
    t.equal(configured.filter((r) => r === `${RELEASE}-${name}`).length, 1, `${name}: one resource`);
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
  t.same([...configured].sort(), [...workloads].sort(), 'one k8s_resource per workload, each of them real');
  const forwards = /^PORT_FORWARDS = \{'gateway': \['8080:(\d+)', '9100:(\d+)'\]\}$/m.exec(code);
  const gateway = chart.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-gateway'))!;
  const port = (name: string) =>
    gateway.spec.template.spec.containers[0].ports.find((p: { name: string }) => p.name === name)?.containerPort;
  t.equal(Number(forwards?.[1]), port('http'), "localhost:8080 forwards to the gateway's HTTP port");
  t.equal(Number(forwards?.[2]), port('ops'), 'localhost:9100 to its ops port');
  for (const { name } of PLATFORM_SERVICES) {
    const deployment = chart.find((o) => o.kind === 'Deployment' && o.metadata.name === `${RELEASE}-${name}`);
    const command = (deployment?.spec.template.spec.containers[0].command ?? []) as string[];
    t.ok(command.includes('--watch'), `${name}: synced bundles restart the service`);
  }
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
