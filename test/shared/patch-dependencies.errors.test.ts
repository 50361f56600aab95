import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/platform.ts';

// scripts/patch-dependencies.ts fixes postgres 3.4.9 at install time. package.json pins that exact version, and a
// postgres without the code the fixes replace fails the install instead of running unpatched.
t.setTimeout(60_000);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules/postgres/package.json'), 'utf8')) as {
  version: string;
};

const runPatch = (dir: string) =>
  spawnSync(process.execPath, [join(dir, 'scripts/patch-dependencies.ts')], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });

t.test('postgres is pinned to the version the fixes were written for, and it is the one installed', async (t) => {
  t.match(pkg.dependencies['postgres'], /^\d+\.\d+\.\d+$/, 'an exact version');
  t.equal(installed.version, pkg.dependencies['postgres']);
  for (const file of ['src/connection.js', 'cjs/src/connection.js', 'src/queue.js', 'cjs/src/queue.js']) {
    t.match(
      readFileSync(join(ROOT, 'node_modules/postgres', file), 'utf8'),
      'patched by scripts/patch-dependencies.ts',
      `${file} is patched`,
    );
  }
});

t.test('a postgres without the code a fix replaces fails the install with a message', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'patch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'scripts'));
  cpSync(join(ROOT, 'scripts/patch-dependencies.ts'), join(dir, 'scripts/patch-dependencies.ts'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  cpSync(join(ROOT, 'node_modules/postgres'), join(dir, 'node_modules/postgres'), { recursive: true });
  const changed = join(dir, 'node_modules/postgres/cjs/src/queue.js');
  writeFileSync(changed, '// a later release, rewritten\nmodule.exports = {}\n');
  const run = runPatch(dir);
  t.equal(run.status, 1, `exit 1\n${run.stderr}`);
  t.match(
    run.stderr,
    `patch-dependencies: postgres: queue removal searches only live slots: ${changed} no longer has the code this fixes; review the fix`,
  );
  t.match(run.stderr, 'the install is incomplete');
});
