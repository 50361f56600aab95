import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { freePort } from '../../scripts/infra.ts';
import { layOutImage } from '../../scripts/image-layout.ts';
import { SERVICES } from '../../scripts/services.ts';
import { CHART, renderChart, type K8sObject } from '../helpers/helm.ts';
import { createTestDatabase, createTestNats, NATS_URL, sleep } from '../helpers/platform.ts';

// The chart's configuration is one the services accept: the processes of the rendered Deployments, started from
// the image's /app layout with the rendered command, user and environment (only the Postgres and NATS addresses
// replaced by this machine's), become ready and serve an authenticated API call through the gateway.
t.setTimeout(150_000);

type Container = {
  command: string[];
  env: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } };
  }[];
  readinessProbe: { httpGet: { path: string; port: number } };
};

t.test('the rendered chart starts the real platform from the image layout', async (t) => {
  const db = await createTestDatabase(t, { migrated: false });
  const bus = await createTestNats(t);
  const app = mkdtempSync(join(tmpdir(), 'image-app-'));
  t.teardown(() => rmSync(app, { recursive: true, force: true }));
  await layOutImage(app);

  // Ports of this test's own (in a cluster every pod has its own network; here the processes share loopback).
  const gatewayPort = await freePort();
  const set: Record<string, string> = {
    'gateway.port': String(gatewayPort),
    'commonEnv.NATS_PREFIX': bus.prefix,
    'commonEnv.LOG_LEVEL': 'warn',
  };
  for (const service of SERVICES) set[`services.${service}.opsPort`] = String(await freePort());
  const objects = await renderChart(t, { valuesFiles: [join(CHART, 'ci/minimal-values.yaml')], set });
  const secret = objects.find((o) => o.kind === 'Secret')!;
  const local: Record<string, string> = { DATABASE_URL: db.url, NATS_URL };
  const environment = (container: Container) => {
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '' };
    for (const e of container.env) {
      if (!e.valueFrom) {
        env[e.name] = e.value!;
        continue;
      }
      // As the kubelet does: an optional key the Secret lacks sets nothing; a required one must be there.
      const { key, optional } = e.valueFrom.secretKeyRef;
      const value = secret.data![key];
      if (value === undefined && !optional) throw new Error(`the Secret has no ${key}`);
      if (value !== undefined) env[e.name] = Buffer.from(value, 'base64').toString();
    }
    for (const [name, value] of Object.entries(local)) if (name in env) env[name] = value;
    return env;
  };
  // The pod's user: the processes run as it where this test may switch users (as root, like CI), so that the
  // layout, owned by root, is as read-only for them as the image's root filesystem.
  const asPodUser = (object: K8sObject) => {
    const { runAsUser, runAsGroup } = object.spec.template.spec.securityContext as {
      runAsUser: number;
      runAsGroup: number;
    };
    return process.getuid?.() === 0 ? { uid: runAsUser, gid: runAsGroup } : {};
  };
  const run = (object: K8sObject, container: Container) => {
    const [command, ...args] = container.command;
    t.equal(command, 'node', `${object.metadata.name} runs node`);
    // `env -i`: exactly the container's environment (the test runner would add its own NODE_OPTIONS otherwise).
    const env = Object.entries(environment(container)).map(([name, value]) => `${name}=${value}`);
    const child = spawn('/usr/bin/env', ['-i', ...env, process.execPath, ...args], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...asPodUser(object),
    });
    const output: string[] = [];
    child.stdout.on('data', (c: Buffer) => output.push(c.toString()));
    child.stderr.on('data', (c: Buffer) => output.push(c.toString()));
    return { child, output };
  };

  // The migrations Job first, as the pre-install hook runs it.
  const job = objects.find((o) => o.kind === 'Job')!;
  const migration = run(job, job.spec.template.spec.containers[0]);
  const migrationCode = await new Promise<number | null>((resolve) => migration.child.once('exit', resolve));
  t.equal(migrationCode, 0, `the migrations Job succeeds\n${migration.output.join('')}`);
  t.match(migration.output.join(''), /"applied":\["001_foundation\.sql"/, 'and applies the migrations');

  const running: { name: string; child: ChildProcess; output: string[]; probe: Container['readinessProbe'] }[] = [];
  t.teardown(() => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
    const container = deployment.spec.template.spec.containers[0] as Container;
    running.push({ name: deployment.metadata.name, probe: container.readinessProbe, ...run(deployment, container) });
  }
  t.equal(running.length, SERVICES.length, 'a process per rendered Deployment');

  for (const p of running) {
    const url = `http://127.0.0.1:${p.probe.httpGet.port}${p.probe.httpGet.path}`;
    let status = 0;
    for (let i = 0; i < 120 && status !== 200 && p.child.exitCode === null; i++) {
      status = await fetch(url).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await sleep(250);
    }
    t.equal(status, 200, `${p.name}: its readiness probe answers 200\n${p.output.join('')}`);
  }

  // A merchant and key with the operator CLI of the image, as the chart's NOTES say.
  const gateway = objects.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-gateway'))!;
  const gatewayContainer = gateway.spec.template.spec.containers[0] as Container;
  const admin = async (...args: string[]) => {
    const cli = run(gateway, { ...gatewayContainer, command: ['node', 'dist/admin/main.js', ...args] });
    const code = await new Promise<number | null>((resolve) => cli.child.once('exit', resolve));
    t.equal(code, 0, `admin ${args[0]} ${args[1]}\n${cli.output.join('')}`);
    return JSON.parse(cli.output.join('')) as Record<string, string>;
  };
  const merchant = await admin('merchant', 'create', '--name', 'Chart Co', '--plan', 'growth');
  const key = await admin('key', 'create', merchant['id']!, '--scopes', 'read,write');

  const base = `http://127.0.0.1:${gatewayPort}/api/v1`;
  const headers = { authorization: `Bearer ${key['key']}`, 'content-type': 'application/json' };
  const created = await fetch(`${base}/affiliates`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ email: 'chart@example.com' }),
  });
  t.equal(created.status, 201, 'an affiliate is created through the gateway');
  const list = await fetch(`${base}/affiliates`, { headers });
  t.equal(list.status, 200, 'GET /api/v1/affiliates with the key answers 200');
  const body = (await list.json()) as { data: { email: string }[] };
  t.same(
    body.data.map((a) => a.email),
    ['chart@example.com'],
  );
  const anonymous = await fetch(`${base}/affiliates`);
  t.equal(anonymous.status, 401, 'and without a key 401');

  // Nothing in the layout is writable by the pod's user: what the services wrote, they wrote elsewhere.
  if (process.getuid?.() === 0) {
    const probe = run(gateway, {
      ...gatewayContainer,
      command: ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(join(app, 'probe'))}, 'x')`],
    });
    t.not(
      await new Promise((resolve) => probe.child.once('exit', resolve)),
      0,
      "the image's /app is read-only to its user",
    );
  }

  // SIGTERM drains every service and each exits 0, as in a rolling update.
  for (const p of running) p.child.kill('SIGTERM');
  for (const p of running) {
    const code = p.child.exitCode ?? (await new Promise<number | null>((resolve) => p.child.once('exit', resolve)));
    t.equal(code, 0, `${p.name} drains and exits 0 on SIGTERM`);
  }
});
