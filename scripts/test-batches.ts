import { globSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, matchesGlob } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The full run's test processes: each folder's files in batches of a few, run one after another in one process
 * (test/helpers/batch.ts), so that a file no longer pays for its own process, tap's start and the loading of every
 * module it shares with its neighbours. Files that change their process for good run alone.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BATCH_SIZE = 4;
const ALONE = [
  // OpenTelemetry's provider is global to the process: once a traced stack registers it, every later stack traces.
  'test/tracing/**',
];
const NEVER = ['**/{dist,fixture,fixtures}/**'];
// Out of the tree the lint and the type check read, and plain JavaScript: Node strips no types under node_modules.
const BATCHES_DIR = join(ROOT, 'node_modules/.cache/test-batches');

/**
 * Writes this run's batch entry files and answers what tap is to run: their paths, and the files that run alone.
 * Files matching `exclude` (globs from the repository's root) are left out.
 */
export function writeTestBatches(opts: { exclude: string[] }): string[] {
  const matches = (file: string, globs: string[]) => globs.some((glob) => matchesGlob(file, glob));
  const files = globSync('test/**/*.test.ts', { cwd: ROOT })
    .filter((file) => !matches(file, [...NEVER, ...opts.exclude]))
    .sort();
  const alone = files.filter((file) => matches(file, ALONE));
  const byFolder = new Map<string, string[]>();
  for (const file of files) {
    if (alone.includes(file)) continue;
    byFolder.set(dirname(file), [...(byFolder.get(dirname(file)) ?? []), file]);
  }
  // One run's at a time: a run replaces the last one's.
  const dir = BATCHES_DIR;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entries: string[] = [];
  for (const [folder, inFolder] of byFolder) {
    for (let i = 0; i < inFolder.length; i += BATCH_SIZE) {
      const entry = join(dir, `${folder.replaceAll('/', '-')}-${i / BATCH_SIZE + 1}.mjs`);
      const paths = inFolder.slice(i, i + BATCH_SIZE).map((file) => join(ROOT, file));
      writeFileSync(entry, batchEntry(ROOT, paths));
      entries.push(entry);
    }
  }
  return [...entries, ...alone];
}

/** The source of a batch's entry: it names the batch's files (absolute paths) and runs them (test/helpers/batch.ts). */
export function batchEntry(root: string, paths: string[]): string {
  const runner = pathToFileURL(join(ROOT, 'test/helpers/batch.ts')).href;
  return (
    `// Written by scripts/test-batches.ts for one run of npm test.\n` +
    `globalThis[Symbol.for('platform.test-batch')] = ${JSON.stringify({ root, paths })};\n` +
    `await import(${JSON.stringify(runner)});\n`
  );
}
