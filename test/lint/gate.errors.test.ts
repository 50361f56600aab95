import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import t from 'tap';

// The lint gate (scripts/lint.ts with the repository's own eslint, Prettier and knip configuration) on a small
// project with one deliberately unused export: it must fail, and say why. A small project rather than a copy of the
// tree, so that the tools check a handful of files; the services' folders are mirrored (empty) because the gate's
// skeleton check and eslint's boundaries read them.
const ROOT = join(import.meta.dirname, '..', '..');
const project = mkdtempSync(join(tmpdir(), 'lint-gate-'));
t.teardown(() => rmSync(project, { recursive: true, force: true }));

const write = (file: string, text: string) => {
  mkdirSync(dirname(join(project, file)), { recursive: true });
  writeFileSync(join(project, file), text);
};
const files = [
  'scripts/lint.ts',
  'scripts/eslint/sql-in-query-modules.js',
  'eslint.config.js',
  'knip.json',
  '.prettierrc.json',
  '.prettierignore',
];
for (const file of [...files, 'tsconfig.base.json']) write(file, readFileSync(join(ROOT, file), 'utf8'));
symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'));

// The tools the copied configuration names, at the repository's versions: nothing more (knip reports what is unused).
const rootPackage = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const tools = ['@eslint/js', '@types/node', 'eslint', 'eslint-plugin-import-x', 'typescript-eslint', 'typescript'];
const devDependencies = Object.fromEntries(
  tools.filter((name) => rootPackage.devDependencies[name]).map((name) => [name, rootPackage.devDependencies[name]]),
);
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
write(
  'package.json',
  json({ name: 'lint-gate', private: true, type: 'module', workspaces: ['shared'], devDependencies }),
);
write('shared/package.json', json({ name: '@lint-gate/shared', private: true, type: 'module' }));
// One line, as Prettier writes it.
write(
  'tsconfig.json',
  '{ "extends": "./tsconfig.base.json", "include": ["shared/src", "services/*/src", "scripts"] }\n',
);

// Every service's src/ as the gate sees it: all its folders, and its files as empty modules.
for (const service of readdirSync(join(ROOT, 'services'), { withFileTypes: true })) {
  if (!service.isDirectory() || service.name === 'dashboard') continue;
  const src = join(ROOT, 'services', service.name, 'src');
  for (const entry of readdirSync(src, { withFileTypes: true, recursive: true })) {
    const path = join('services', service.name, 'src', relative(src, join(entry.parentPath, entry.name)));
    if (entry.isDirectory()) mkdirSync(join(project, path), { recursive: true });
    else if (entry.name.endsWith('.ts')) write(path, 'export {};\n');
  }
}

// shared/ and a script that uses part of it; `forgottenHelper` is what nothing imports.
write(
  'shared/src/money.ts',
  [
    'export const toCents = (amount: number): number => Math.round(amount * 100);',
    'export const forgottenHelper = (cents: number): number => cents * 2;',
    '',
  ].join('\n'),
);
write(
  'scripts/price.ts',
  ["import { toCents } from '../shared/src/money.ts';", '', 'process.stdout.write(`${toCents(1.5)}\\n`);', ''].join(
    '\n',
  ),
);

const lint = spawnSync(process.execPath, ['scripts/lint.ts'], { cwd: project, encoding: 'utf8' });
const output = lint.stdout + lint.stderr;

t.equal(lint.status, 1, 'npm run lint fails');
t.match(
  output,
  /Unused exports \(1\)\s+forgottenHelper\s+shared\/src\/money\.ts/,
  'knip names the export and its file',
);
t.notMatch(output, /Unused (files|dependencies|devDependencies)|Unlisted/, 'and finds nothing else to report');
t.match(output, /lint: knip failed/, 'the summary names knip as the tool that failed, and only knip');
