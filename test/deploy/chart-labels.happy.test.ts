import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { ciValuesFiles, renderChart, templateChart, type K8sObject } from '../helpers/helm.ts';

// Kubernetes takes only strings as label and annotation values. A value the chart renders unquoted is read by YAML
// as whatever it looks like: a pod annotation `checksum/env: 693645627081e612` is a float, a release named `1234`
// gives an integer instance label, and the API server refuses the object. Every such value must stay a string.
t.setTimeout(120_000);

type Env = { name: string; value?: string };
const valuesFile = (name: string) => ciValuesFiles().find((f) => basename(f) === `${name}-values.yaml`)!;
const gatewayOf = (objects: K8sObject[]) =>
  objects.find((o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === 'gateway')!;
const checksumOf = (deployment: K8sObject): unknown => deployment.spec.template.metadata.annotations['checksum/env'];

/** Whether YAML (1.2 as the `yaml` package reads it, or 1.1 as Kubernetes' decoder does) reads `text` as no string. */
const looksNumeric = (text: string) =>
  typeof parse(text) !== 'string' || typeof parse(text, { version: '1.1' }) !== 'string';

/** The label and annotation maps anywhere in an object (metadata, pod templates, selectors), with their paths. */
function stringMaps(node: unknown, path: string, out: [string, Record<string, unknown>][] = []) {
  if (Array.isArray(node)) node.forEach((item, i) => stringMaps(item, `${path}[${i}]`, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (['labels', 'annotations', 'matchLabels'].includes(key) && value && typeof value === 'object')
        out.push([`${path}.${key}`, value as Record<string, unknown>]);
      else stringMaps(value, `${path}.${key}`, out);
    }
  }
  return out;
}

/** Go's encoding/json of the env map, as the chart's `toJson` writes it: sorted keys, HTML characters escaped. */
function goJson(env: Record<string, unknown>): string {
  const sorted = Object.fromEntries(
    Object.keys(env)
      .sort()
      .map((key) => [key, env[key]]),
  );
  return JSON.stringify(sorted).replaceAll('<', '\\u003c').replaceAll('>', '\\u003e').replaceAll('&', '\\u0026');
}
const hashOf = (env: Record<string, unknown>) => createHash('sha256').update(goJson(env)).digest('hex').slice(0, 16);

/**
 * The gateway's environment as the chart hashed it. The rendered variables are strings; those that read as a number
 * or a boolean may have been one in the values, so every typing is tried against the rendered checksum.
 */
function hashedEnv(deployment: K8sObject): Record<string, unknown> | undefined {
  const plain = (deployment.spec.template.spec.containers[0].env as Env[]).filter((e) => e.value !== undefined);
  const typed = (e: Env): unknown => {
    try {
      return JSON.parse(e.value!);
    } catch {
      return e.value;
    }
  };
  const ambiguous = plain.filter((e) => typeof typed(e) !== 'string');
  for (let mask = 0; mask < 2 ** ambiguous.length; mask++) {
    const env: Record<string, unknown> = Object.fromEntries(plain.map((e) => [e.name, e.value]));
    ambiguous.forEach((e, i) => {
      if (mask & (2 ** i)) env[e.name] = typed(e);
    });
    if (hashOf(env) === checksumOf(deployment)) return env;
  }
  return undefined;
}

t.test('a checksum that YAML would read as a number stays a string annotation', async (t) => {
  const values = { valuesFiles: [valuesFile('minimal')] };
  const env = hashedEnv(gatewayOf(await renderChart(t, values)));
  if (!env) return t.fail('checksum/env is no longer sha256 of the environment as JSON: update this test');
  // RPC_TIMEOUT_MS is one of the gateway's own variables: look for a value in its range that gives such a checksum.
  let chosen: { timeout: number; hash: string } | undefined;
  for (let timeout = 50; timeout <= 60_000 && !chosen; timeout++) {
    const hash = hashOf({ ...env, RPC_TIMEOUT_MS: timeout });
    if (looksNumeric(hash)) chosen = { timeout, hash };
  }
  if (!chosen) return t.fail('no RPC_TIMEOUT_MS gives a numeric-looking checksum');
  const objects = await renderChart(t, {
    ...values,
    set: { 'services.gateway.env.RPC_TIMEOUT_MS': `${chosen.timeout}` },
  });
  t.equal(checksumOf(gatewayOf(objects)), chosen.hash, `RPC_TIMEOUT_MS=${chosen.timeout}: checksum ${chosen.hash}`);
});

t.test('every label and annotation value is a string, whatever the values and the release name', async (t) => {
  // Strings that read as numbers wherever the chart copies values into labels and annotations.
  const dir = mkdtempSync(join(tmpdir(), 'chart-labels-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const numericLooking = join(dir, 'numeric-looking-values.yaml');
  writeFileSync(
    numericLooking,
    stringify({
      commonLabels: { team: '1234' },
      podAnnotations: { revision: '693645627081e612' },
      gateway: { service: { annotations: { weight: '10' } } },
      ingress: { enabled: true, annotations: { timeout: '30' } },
      networkPolicy: { enabled: true },
      metrics: {
        serviceMonitor: { enabled: true, labels: { release: '2' } },
        prometheusRule: { enabled: true, labels: { release: '2' } },
        grafanaDashboard: { enabled: true, annotations: { folder: '1e3' } },
      },
    }),
  );
  const renders = [
    ...ciValuesFiles().map((file) => ({ name: basename(file), valuesFiles: [file], release: 'aff' })),
    {
      name: 'release 1234, numeric-looking values',
      valuesFiles: [valuesFile('minimal'), numericLooking],
      release: '1234',
    },
    {
      name: "bundled NATS, the NATS chart's objects included",
      valuesFiles: [valuesFile('bundled-nats'), numericLooking],
      release: 'aff',
      withNats: true,
    },
  ];
  for (const render of renders) {
    const objects = await renderChart(t, render);
    const wrong = objects.flatMap((object) =>
      stringMaps(object, `${object.kind}/${object.metadata.name}`).flatMap(([path, map]) =>
        Object.entries(map)
          .filter(([, value]) => typeof value !== 'string')
          .map(([key, value]) => `${path}.${key}: ${String(value)}`),
      ),
    );
    t.same(wrong, [], `${render.name}: no label or annotation read as anything but a string`);
  }
});

t.test('with the bundled NATS, a release name YAML reads as no string is refused by name', async (t) => {
  // The NATS chart puts the release name in its labels unquoted: such a release would be refused by Kubernetes.
  for (const release of ['1234', '12e3', '0x1f', 'yes', 'null']) {
    const result = await templateChart(t, { valuesFiles: [valuesFile('bundled-nats')], release, withNats: true });
    t.not(result.code, 0, `${release}: refused`);
    t.match(result.stderr, `release name "${release}"`, `${release}: the message names it`);
  }
  for (const release of ['aff', 'prod-1', '1st', '1-2'])
    await t.resolves(renderChart(t, { valuesFiles: [valuesFile('bundled-nats')], release, withNats: true }), release);
  await t.resolves(renderChart(t, { valuesFiles: [valuesFile('minimal')], release: '1234' }), 'with an external NATS');
});
