import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import t from 'tap';

// The lint gate's boundaries on a small project: an import circle (of types only), a service importing another
// service by its workspace name and by a relative path, the dashboard importing past its generated types, and a
// service with a folder outside the skeleton, a folder of the edge outside the edge's, a domain rule that does I/O,
// a surface's file running SQL outside its queries/ (on a pool of any name: the rule knows postgres.js's types), and a
// surface importing another surface's helper. The same project without them passes (a statement on a pool named
// `db` in a query module, an `html` tagged template outside one, and a surface reading another's route specs among
// them), so each failure is the rule's. The services are those of this tree,
// each with its src/ (every folder, and every file as an empty module): the skeleton check knows them by name.
const ROOT = join(import.meta.dirname, '..', '..');
// Two runs of the whole gate, each starting four tools: on a busy machine that takes minutes.
t.setTimeout(300_000);

function makeProject(): { dir: string; write: (file: string, text: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'lint-boundaries-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  };
  const copied = ['scripts/lint.ts', 'scripts/eslint/sql-in-query-modules.js', 'eslint.config.js', 'knip.json'];
  for (const file of [...copied, '.prettierrc.json', '.prettierignore'])
    write(file, readFileSync(join(ROOT, file), 'utf8'));
  write('tsconfig.base.json', readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8'));
  write(
    'tsconfig.json',
    '{ "extends": "./tsconfig.base.json", "include": ["shared/src", "services/*/src", "scripts"] }\n',
  );

  const { devDependencies: versions } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const tools = ['@eslint/js', '@types/node', 'eslint', 'eslint-plugin-import-x', 'typescript-eslint', 'typescript'];
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const devDependencies = Object.fromEntries(tools.map((name) => [name, versions[name]]));
  write('package.json', json({ private: true, type: 'module', workspaces: ['shared', 'services/*'], devDependencies }));

  // The checkout's packages, but @platform/* leads to this project's own workspaces.
  mkdirSync(join(dir, 'node_modules/@platform'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules')))
    if (entry !== '@platform') symlinkSync(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  const workspace = (folder: string, name: string) => {
    // The one service below that imports shared code says so, and the edge its postgres.js types; the others import
    // nothing.
    const dependencies =
      name === 'affiliates' ? { '@platform/shared': '*' } : name === 'gateway' ? { postgres: '*' } : {};
    const manifest = { name: `@platform/${name}`, private: true, type: 'module', exports: { './*': './src/*.ts' } };
    write(`${folder}/package.json`, json({ ...manifest, dependencies }));
    symlinkSync(join(dir, folder), join(dir, 'node_modules/@platform', name));
  };

  workspace('shared', 'shared');
  write('shared/src/clock.ts', 'export const now = (): number => Date.now();\n');
  write(
    'shared/src/timer.ts',
    "import { now } from './clock.ts';\n\nexport const since = (at: number): number => now() - at;\n",
  );
  for (const service of readdirSync(join(ROOT, 'services'), { withFileTypes: true })) {
    if (!service.isDirectory() || service.name === 'dashboard') continue;
    workspace(`services/${service.name}`, service.name);
    const src = join(ROOT, 'services', service.name, 'src');
    for (const entry of readdirSync(src, { withFileTypes: true, recursive: true })) {
      const path = join('services', service.name, 'src', relative(src, join(entry.parentPath, entry.name)));
      if (entry.isDirectory()) mkdirSync(join(dir, path), { recursive: true });
      else if (entry.name.endsWith('.ts')) write(path, 'export {};\n');
    }
  }
  // A service that uses shared code, as they all do, and a domain rule of its own given what a query read (a type
  // from the query module is allowed in domain/).
  write(
    'services/affiliates/src/main.ts',
    "import { since } from '@platform/shared/timer';\nimport { idOf } from './domain/rule.ts';\nimport { findRow } from './queries/rows.ts';\n\nprocess.stdout.write(`${since(0)} ${idOf(findRow())}\\n`);\n",
  );
  write(
    'services/affiliates/src/queries/rows.ts',
    "export interface Row {\n  id: string;\n}\nexport const findRow = (): Row => ({ id: 'a' });\n",
  );
  write(
    'services/affiliates/src/domain/rule.ts',
    "import type { Row } from '../queries/rows.ts';\n\nexport const idOf = (row: Row): string => row.id;\n",
  );
  // A gateway surface's statements in its query module, on a pool named `db` and a transaction, called from the
  // surface's file; an `html` tagged template there, which is not SQL; and the API's route specs reading another
  // surface's (the one import between surfaces allowed).
  write(
    'services/gateway/src/surfaces/dashboard/queries/sessions.ts',
    [
      "import type { Sql, TransactionSql } from 'postgres';",
      '',
      'export const deleteSession = (db: Sql, tokenHash: string) =>',
      '  db`delete from dashboard_sessions where token_hash = ${tokenHash}`;',
      "export const deleteAll = (tx: TransactionSql) => tx.unsafe('delete from dashboard_sessions');",
      '',
    ].join('\n'),
  );
  write(
    'services/gateway/src/surfaces/dashboard/sessions.ts',
    [
      "import type { Sql } from 'postgres';",
      "import { deleteAll, deleteSession } from './queries/sessions.ts';",
      '',
      'const html = (strings: TemplateStringsArray, ...values: unknown[]): string => strings.join(String(values.length));',
      "const signOut = async (db: Sql) => html`<p>${(await deleteSession(db, 'hash')).count}</p>`;",
      '',
      'process.stdout.write(`${typeof signOut} ${typeof deleteAll}\\n`);',
      '',
    ].join('\n'),
  );
  write('services/gateway/src/surfaces/api-v1/specs.ts', "import '../tracking/specs.ts';\n");
  workspace('services/dashboard', 'dashboard');
  write('services/dashboard/src/generated/api.ts', 'export interface Paths {\n  path: string;\n}\n');
  write(
    'services/dashboard/src/main.ts',
    "import type { Paths } from './generated/api.ts';\n\nconst home: Paths = { path: '/' };\nprocess.stdout.write(home.path);\n",
  );
  return { dir, write };
}

/** The gate in `dir`; the two projects are linted at once, each a few seconds of work in processes of its own. */
const lint = (dir: string) =>
  new Promise<{ status: number | null; output: string }>((resolve) => {
    const run = spawn(process.execPath, ['scripts/lint.ts'], { cwd: dir });
    let output = '';
    run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    run.once('close', (status) => resolve({ status, output }));
  });

const clean = makeProject();
const crossed = makeProject();
// (a) A circle through a type-only import: clock.ts asks timer.ts for a type, timer.ts imports clock.ts.
crossed.write(
  'shared/src/clock.ts',
  "import type { Since } from './timer.ts';\n\nexport const now = (): Since => Date.now();\n",
);
crossed.write(
  'shared/src/timer.ts',
  "import { now } from './clock.ts';\n\nexport type Since = number;\nexport const since = (at: number): number => now() - at;\n",
);
// (b) A service importing another's source, by the workspace name and by a path.
crossed.write(
  'services/affiliates/src/deps.ts',
  "import '@platform/events/config';\nimport '../../payments/src/config.ts';\n",
);
// (c) The dashboard importing the gateway's code and shared code instead of its generated types.
crossed.write(
  'services/dashboard/src/app.ts',
  "import '@platform/gateway/config';\nimport '@platform/shared/clock';\n",
);
// (d) Domain rules in a folder of their own instead of domain/.
mkdirSync(join(crossed.dir, 'services/dispatcher/src/rules'));
// (e) A domain rule that does I/O instead of being given what it decides on: it reads through a query module and a
// shared database module, opens a socket, and reaches for the service's deps.
crossed.write('shared/src/db.ts', "export const open = (): string => 'pool';\n");
crossed.write(
  'services/affiliates/src/domain/rule.ts',
  [
    "import type { Row } from '../queries/rows.ts';",
    "import { findRow } from '../queries/rows.ts';",
    "import { connect } from 'node:net';",
    "import { open } from '@platform/shared/db';",
    "import '../deps.ts';",
    '',
    'export const idOf = (row: Row): string => row.id + findRow().id + open() + typeof connect;',
    '',
  ].join('\n'),
);
// (f) A folder of the edge's src/ outside the edge's skeleton, and a surface without its router module.
mkdirSync(join(crossed.dir, 'services/gateway/src/idempotency'));
mkdirSync(join(crossed.dir, 'services/gateway/src/surfaces/widgets'));
// (g) A surface's file running SQL itself, on a pool named `db`, on a context's pool, by unsafe() (called by name or
// by index), on a pool of a type parameter and on one typed `any` named `sql`, instead of calling its queries/.
crossed.write(
  'services/gateway/src/surfaces/dashboard/sessions.ts',
  [
    "import type { Sql } from 'postgres';",
    "import { deleteAll, deleteSession } from './queries/sessions.ts';",
    '',
    'const signOut = async (db: Sql, ctx: { sql: Sql }): Promise<number> => {',
    '  const expired = await db`delete from dashboard_sessions where expires_at < now()`;',
    '  await ctx.sql`select 1`;',
    "  await ctx.sql.unsafe('select 2');",
    '  await (async <Q extends Sql>(q: Q) => q`select 3`)(db);',
    "  await ctx.sql['unsafe']('select 4');",
    '  await (ctx as { sql: any }).sql`select 5`;',
    "  return expired.count + (await deleteSession(db, 'hash')).count;",
    '};',
    '',
    'process.stdout.write(`${typeof signOut} ${typeof deleteAll}\\n`);',
    '',
  ].join('\n'),
);
// (h) A surface importing another surface's helper (not its route specs), by a relative path.
crossed.write('services/gateway/src/surfaces/portal/limits.ts', "import '../dashboard/sessions.ts';\n");
const runs = { clean: lint(clean.dir), crossed: lint(crossed.dir) };

t.test('the project without the violations passes', async (t) => {
  const { status, output } = await runs.clean;
  t.equal(status, 0, output);
});

t.test('each boundary crossed fails the gate, and the gate names it', async (t) => {
  const { status, output } = await runs.crossed;
  t.equal(status, 1, 'npm run lint fails');
  t.match(
    output,
    /shared\/src\/(clock|timer)\.ts -> shared\/src\/(timer|clock)\.ts/,
    'dpdm names the circle of a type-only import',
  );
  t.match(
    output,
    /Unexpected path "@platform\/events\/config" imported in restricted zone\. The affiliates service imports shared\/ and its own files only/,
    'a service importing another by its workspace name',
  );
  t.match(
    output,
    /Unexpected path "\.\.\/\.\.\/payments\/src\/config\.ts" imported in restricted zone/,
    'and by a path',
  );
  t.match(
    output,
    /Unexpected path "@platform\/gateway\/config" imported in restricted zone\. The dashboard imports only its own files/,
    "the dashboard importing the gateway's code",
  );
  t.match(output, /Unexpected path "@platform\/shared\/clock" imported in restricted zone/, 'or shared code');
  t.match(
    output,
    /'\.\.\/queries\/rows\.ts' import is restricted from being used by a pattern\. domain\/ decides and does no I\/O/,
    'a domain rule importing a query (its type-only import of the same module passes)',
  );
  t.match(output, /'connect' import from 'node:net' is restricted\. domain\/ decides/, 'or opening a socket');
  t.match(output, /'@platform\/shared\/db' import is restricted from being used\. domain\/ decides/, 'or the pool');
  t.match(output, /'\.\.\/deps\.ts' import is restricted from being used by a pattern\. domain\/ decides/, 'or deps');
  t.notMatch(output, /rule\.ts\n\s+1:/, 'the type-only import on line 1 is not reported');
  t.match(output, /services\/dispatcher has src\/rules\/: .*domain rules go in src\/domain\//, 'the skeleton check');
  t.match(
    output,
    /services\/gateway has src\/idempotency\/: the edge's src\/ has main\.ts, .* and nothing else/,
    "the edge's skeleton: a folder of its own",
  );
  t.match(
    output,
    /services\/gateway has no src\/surfaces\/widgets\/router\.ts: every surface has it/,
    'and a surface without its router module',
  );
  t.match(
    output,
    /surfaces\/dashboard\/sessions\.ts\n\s+5:25\s+error\s+SQL runs in the edge's query modules only[^\n]*\n\s+6:9\s+error\s+SQL runs[^\n]*\n\s+7:9\s+error\s+SQL runs[^\n]*\n\s+8:\d+\s+error\s+SQL runs[^\n]*\n\s+9:9\s+error\s+SQL runs[^\n]*\n(\s+10:\d+\s+error\s+(?!SQL)[^\n]*\n)*\s+10:\d+\s+error\s+SQL runs/,
    "a surface's file running SQL: on a pool named db, a context's pool, by unsafe() or ['unsafe'], on a type parameter, on a pool typed any",
  );
  t.notMatch(output, /queries\/sessions\.ts\n\s+[0-9]+:/, 'its query module running the same is not reported');
  t.match(
    output,
    /Unexpected path "\.\.\/dashboard\/sessions\.ts" imported in restricted zone\. The portal surface imports its own files, http\/ and shared\/ only[^\n]*what surfaces share goes in services\/gateway\/src\/http\//,
    "a surface importing another surface's helper",
  );
  t.notMatch(
    output,
    /api-v1\/specs\.ts\n\s+[0-9]+:/,
    "the API's specs reading another surface's specs is not reported",
  );
  t.match(output, /lint: eslint, dpdm, skeleton failed/, 'the summary names the three, and nothing else');
});
