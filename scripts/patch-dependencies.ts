import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/**
 * Runs after `npm ci` / `npm install` (the root package's postinstall) and fixes known defects in installed
 * dependencies that upstream has not released yet. Each fix replaces an exact piece of the installed source, is
 * idempotent, and says so when the installed version no longer has the code it fixes (upgraded: check whether the
 * fix is still needed, then delete it here).
 *
 * postgres 3.4.9, src/connection.js `nextWrite` (porsager/postgres#1154, #1208; fix proposed in #1209): a write
 * buffered for the next turn of the event loop can run after the connection's socket closed (a backend killed, a
 * database dropped, a reserved connection whose server went away). `socket.write` on null then throws from a
 * setImmediate callback, an uncaught exception that takes the whole service down. The guard settles the waiting
 * queries with CONNECTION_CLOSED instead, the same error a query gets when its connection closes under it, and hands
 * the connection back to the pool as closed, so that the next query reconnects it. (A reserved connection that
 * closed is put back as open by its release(); without the second step every later query on it failed.)
 *
 * postgres 3.4.9, src/queue.js `remove`: the pool's queues keep the slots they shifted (as undefined) until they
 * empty, and `remove` searched from the first slot. A connection taken from the busy queue for one more pipelined
 * query is removed and pushed again, so under steady load, while the busy queue never empties, every query searched
 * an array that grew by one slot per query: 6 % of a client's CPU in a 3-second run of 32 concurrent queries on a
 * pool of 10, and 1.9 % of the affiliates service's CPU under the benchmark's load (perf). The fix searches
 * the live part only and drops the dead slots once they outnumber the live ones.
 */
const fixes = [
  {
    name: 'postgres: nextWrite on a closed socket',
    files: ['src/connection.js', 'cjs/src/connection.js'],
    // The package exports no package.json: its CommonJS entry is <root>/cjs/src/index.js.
    root: () => resolve(createRequire(import.meta.url).resolve('postgres'), '../../..'),
    from: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    to: `  function nextWrite(fn) {
    if (!socket) { // patched by scripts/patch-dependencies.ts (porsager/postgres#1208)
      chunk = nextWriteTimer = null
      const err = Errors.connection('CONNECTION_CLOSED', options)
      error(err)
      onclose(connection, err)
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    name: 'postgres: queue removal searches only live slots',
    files: ['src/queue.js', 'cjs/src/queue.js'],
    root: () => resolve(createRequire(import.meta.url).resolve('postgres'), '../../..'),
    from: `    remove: (x) => {
      const index = xs.indexOf(x)
      return index === -1
        ? null
        : (xs.splice(index, 1), x)
    },`,
    to: `    remove: (x) => { // patched by scripts/patch-dependencies.ts: live slots only
      if (index > 64 && index > xs.length - index) {
        xs = xs.slice(index)
        index = 0
      }
      const at = xs.indexOf(x, index)
      return at === -1
        ? null
        : (xs.splice(at, 1), x)
    },`,
  },
];

let failed = false;
for (const fix of fixes) {
  for (const file of fix.files) {
    const path = join(fix.root(), file);
    const source = readFileSync(path, 'utf8');
    if (source.includes(fix.to)) continue;
    if (!source.includes(fix.from)) {
      process.stderr.write(`patch-dependencies: ${fix.name}: ${path} no longer has the code this fixes; review the fix\n`);
      failed = true;
      continue;
    }
    writeFileSync(path, source.replace(fix.from, fix.to));
    process.stdout.write(`patch-dependencies: ${fix.name}: patched ${path}\n`);
  }
}
// package.json pins postgres to the version these fixes were written for. A version without the code they fix fails the
// install, loudly: running unpatched would bring the defects back without anyone noticing.
if (failed) {
  process.stderr.write('patch-dependencies: the install is incomplete: update or remove the fix above, then npm ci again\n');
  process.exit(1);
}
