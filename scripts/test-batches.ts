import { globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
/** Each file's time in the last run that ran it (recordTestTimes), for the order of the next. */
const TIMES_FILE = join(ROOT, 'node_modules/.cache/test-times.json');
/** What a file never timed here is taken to need: a browser file drives Chromium through pages, most others not. */
const GUESS_MS = { browser: 15_000, other: 4_000 };

const readTimes = (): Record<string, number> => {
  try {
    return JSON.parse(readFileSync(TIMES_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
};

/** Keeps the files' times of a run (path from the repository's root, ms) for the order of the next run. */
export function recordTestTimes(times: [string, number][]): void {
  if (times.length === 0) return;
  mkdirSync(dirname(TIMES_FILE), { recursive: true });
  writeFileSync(TIMES_FILE, JSON.stringify({ ...readTimes(), ...Object.fromEntries(times) }));
}

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
  const batches = planBatches(
    files.filter((file) => !alone.includes(file)),
    readTimes(),
  );
  // One run's at a time: a run replaces the last one's. tap starts files in the order of their names, so each entry's
  // name begins with its rank.
  const dir = BATCHES_DIR;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entries = batches.map(({ name, files }, rank) => {
    const entry = join(dir, `${String(rank + 1).padStart(3, '0')}-${name}.mjs`);
    writeFileSync(
      entry,
      batchEntry(
        ROOT,
        files.map((file) => join(ROOT, file)),
      ),
    );
    return entry;
  });
  return [...entries, ...alone];
}

/**
 * A run's batches, in the order to start them: each folder's files (sorted) in groups of BATCH_SIZE, the longest
 * expected first. A file is expected to take its time in `times` (ms, from the last run that ran it), or a guess.
 * Longest first: a long batch started last would leave the other processes idle while it finishes.
 */
export function planBatches(files: string[], times: Record<string, number>): { name: string; files: string[] }[] {
  const byFolder = new Map<string, string[]>();
  for (const file of [...files].sort()) byFolder.set(dirname(file), [...(byFolder.get(dirname(file)) ?? []), file]);
  const expected = (file: string) => times[file] ?? (/\.browser\./.test(file) ? GUESS_MS.browser : GUESS_MS.other);
  const batches: { name: string; files: string[]; ms: number }[] = [];
  for (const [folder, inFolder] of byFolder) {
    for (let i = 0; i < inFolder.length; i += BATCH_SIZE) {
      const files = inFolder.slice(i, i + BATCH_SIZE);
      const ms = files.reduce((sum, file) => sum + expected(file), 0);
      batches.push({ name: `${folder.replaceAll('/', '-')}-${i / BATCH_SIZE + 1}`, files, ms });
    }
  }
  return batches.sort((a, b) => b.ms - a.ms).map(({ name, files }) => ({ name, files }));
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
