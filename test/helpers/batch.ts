import { registerHooks } from 'node:module';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';

/**
 * Several test files in one process, one after another, each as a subtest of its own: the modules they share
 * (the services, TypeBox, the drivers) are loaded once, and tap's process starts once, instead of once per file.
 * A file is written as if it ran alone (`import t from 'tap'` at its top): its `t` is resolved here to its own
 * subtest, so that its tests, its timeout and its teardowns (its stack, its database) are its own and end with it,
 * before the next file starts. Modules that import tap and are not test files (the helpers) get tap's root, as
 * they would alone: the browser helper's one Chromium serves every file of the batch.
 * scripts/test-batches.ts writes one entry file per batch, which names its files (BATCH) and imports this one; files
 * that change the process for good (the tracing ones register OpenTelemetry's global provider) run alone.
 */
const BATCH = Symbol.for('platform.test-batch');
const SCHEME = 'platform-test-file:';
// What a file alone gets from tap (the `timeout` setting, passed to each process) unless it sets its own.
const FILE_TIMEOUT_MS = Number(process.env['TAP_TIMEOUT'] ?? '30') * 1000;
const files = new Map<string, Test>();

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'tap' && context.parentURL && files.has(context.parentURL))
      return { url: SCHEME + encodeURIComponent(context.parentURL), format: 'module', shortCircuit: true };
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!url.startsWith(SCHEME)) return nextLoad(url, context);
    const parent = JSON.stringify(decodeURIComponent(url.slice(SCHEME.length)));
    return {
      format: 'module',
      source: `export default globalThis[Symbol.for('${SCHEME}')].get(${parent});`,
      shortCircuit: true,
    };
  },
});
(globalThis as Record<symbol, unknown>)[Symbol.for(SCHEME)] = files;

const batch = (globalThis as Record<symbol, { root: string; paths: string[] } | undefined>)[BATCH];
if (!batch) throw new Error('test/helpers/batch.ts runs the files an entry of scripts/test-batches.ts names');
// The parent's bound on this process: each file keeps its own, so this only has to outlast them all.
t.setTimeout(batch.paths.length * Math.max(FILE_TIMEOUT_MS, 600_000));
for (const path of batch.paths) {
  const url = pathToFileURL(path).href;
  await t.test(relative(batch.root, path), async (file) => {
    file.setTimeout(FILE_TIMEOUT_MS);
    files.set(url, file);
    await import(url);
  });
}
// Alone, a file whose process outlives it (a connection its failed start never closed) is ended by its timeout; in a
// batch the bound would be the batch's. So once every file has ended, the process has a file's timeout to end too;
// if it has not, what is still open is reported and fails the batch.
t.end();
setTimeout(() => {
  process.stderr.write(`batch: still open after its last file: ${process.getActiveResourcesInfo().join(', ')}\n`);
  process.exitCode ||= 1;
  process.exit();
}, FILE_TIMEOUT_MS).unref();
