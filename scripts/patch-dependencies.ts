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
 * the connection back to the pool as closed, so that the next query reconnects it, unless the pool already holds it
 * as closed or connecting (handing it back again started a second socket on the same connection, whose first one
 * then lost its 'error' listener: an uncaught `read ECONNRESET` when that socket was reset).
 *
 * postgres 3.4.9, a backend terminated (pg_terminate_backend, a restart, a failover) while its connection is busy.
 * Seen in test/resilience/postgres-loss.errors.test.ts, each a crash or a stall of a service:
 * - src/connection.js `ReadyForQuery` drops the promise of `fetchArrayTypes()`, the first statement of every new
 *   connection (porsager/postgres#1192, #1205): when the connection is lost during it, the rejection is unhandled and
 *   the process exits (`read ECONNRESET` or 57P01, with no stack of ours). The connection's close handling already
 *   settles what the loss concerns, so the promise's rejection is caught.
 * - src/connection.js `closed` keeps the in-flight query, the error response and the unsent bytes of the socket that
 *   closed (porsager/postgres#1223): the next connection replayed the old 57P01 onto its first query, wrote the old
 *   bytes ahead of its startup message, and during startup the internal query was never settled. They are cleared.
 * - src/index.js `onclose` hands a queued reserve() to the reconnect as its initial query, which the reconnect drops
 *   (porsager/postgres#1195): the reserve never settled and its transaction hung, stalling a consumer for good. A
 *   reserve now stays queued until a connection is handed to it, and leaves the queue when it fails.
 * - src/index.js `reserve` and `begin`: after the connection of a reserved connection or a transaction closed, the
 *   pool reconnects it for other queries, but the handle kept running its queries on it (a ROLLBACK could land in
 *   another caller's transaction) and release() put it back as open under its new user (porsager/postgres#1199,
 *   #1186). The handle now fails its queued and later queries with the close's error, and release() leaves the
 *   connection to the pool.
 *
 * postgres 3.4.9, src/connection.js `execute`: a socket that errors (reset by the network or the server) says 'error'
 * at once but 'close' only later in the event loop's turn, and the pool keeps the connection as open or busy in
 * between. A query sent on it then (any pool query of that turn, more often on a loaded machine) was dropped by the
 * close without ever settling; a batch awaiting it waited for ever (the gateway's rate limiter: every API call
 * answered 503 long after Postgres was back, test/resilience/postgres-unreachable.errors.test.ts). A query for a destroyed
 * socket now fails at once with CONNECTION_CLOSED (test/resilience/postgres-reset.errors.test.ts).
 *
 * postgres 3.4.9, src/queue.js `remove`: the pool's queues keep the slots they shifted (as undefined) until they
 * empty, and `remove` searched from the first slot. A connection taken from the busy queue for one more pipelined
 * query is removed and pushed again, so under steady load, while the busy queue never empties, every query searched
 * an array that grew by one slot per query: 6 % of a client's CPU in a 3-second run of 32 concurrent queries on a
 * pool of 10, and 1.9 % of the affiliates service's CPU under the benchmark's load (perf). The fix searches
 * the live part only and drops the dead slots once they outnumber the live ones.
 */
// The package exports no package.json: its CommonJS entry is <root>/cjs/src/index.js.
const postgresRoot = () => resolve(createRequire(import.meta.url).resolve('postgres'), '../../..');

const fixes = [
  {
    name: 'postgres: nextWrite on a closed socket',
    files: ['src/connection.js', 'cjs/src/connection.js'],
    root: postgresRoot,
    from: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    to: `  function nextWrite(fn) {
    if (!socket) { // patched by scripts/patch-dependencies.ts (porsager/postgres#1208)
      chunk = nextWriteTimer = null
      const err = Errors.connection('CONNECTION_CLOSED', options)
      error(err)
      connection.queue !== queues.closed && connection.queue !== queues.connecting && onclose(connection, err)
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    name: 'postgres: a failed fetch of array types is not an unhandled rejection',
    files: ['src/connection.js', 'cjs/src/connection.js'],
    root: postgresRoot,
    from: `        initial.reserve && (initial = null)
        return fetchArrayTypes()`,
    to: `        initial.reserve && (initial = null)
        return fetchArrayTypes().catch(() => {}) // patched by scripts/patch-dependencies.ts (porsager/postgres#1192)`,
  },
  {
    name: 'postgres: a closed socket leaves nothing to the next one',
    files: ['src/connection.js', 'cjs/src/connection.js'],
    root: postgresRoot,
    from: `    socket.removeAllListeners()
    socket = null

    if (initial)
      return reconnect()

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
`,
    to: `    socket.removeAllListeners()
    socket = null
    chunk = null // patched by scripts/patch-dependencies.ts (porsager/postgres#1223)

    if (initial) {
      query && query !== initial && queryError(query, Errors.connection('CONNECTION_CLOSED', options))
      query = errorResponse = null
      return reconnect()
    }

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
    query = errorResponse = null
`,
  },
  {
    name: 'postgres: a queued reserve survives the close of the connection it waited for',
    files: ['src/index.js', 'cjs/src/index.js'],
    root: postgresRoot,
    from: `    queries.length && connect(c, queries.shift())
  }`,
    to: `    queries.length && connect(c, queries.peek().reserve ? queries.peek() : queries.shift()) // patched (porsager/postgres#1195)
  }`,
  },
  {
    name: 'postgres: the queue shows its first entry without taking it (for the fix above)',
    files: ['src/queue.js', 'cjs/src/queue.js'],
    root: postgresRoot,
    from: `    push: (x) => (xs.push(x), x),`,
    to: `    peek: () => xs[index], // patched by scripts/patch-dependencies.ts
    push: (x) => (xs.push(x), x),`,
  },
  {
    name: 'postgres: a reserved connection that closed is not used or released again',
    files: ['src/index.js', 'cjs/src/index.js'],
    root: postgresRoot,
    from: `        const query = { reserve: resolve, reject }
        queries.push(query)
        closed.length && connect(closed.shift(), query)
      })

    move(c, reserved)
    c.reserved = () => queue.length
      ? c.execute(queue.shift())
      : move(c, reserved)
    c.reserved.release = true

    const sql = Sql(handler)
    sql.release = () => {
      c.reserved = null
      onopen(c)
    }

    return sql

    function handler(q) {
      c.queue === full`,
    to: `        // patched by scripts/patch-dependencies.ts: a reserve that failed leaves the queue (porsager/postgres#1195)
        const query = { reserve: resolve, reject: e => (queries.remove(query), reject(e)) }
        queries.push(query)
        closed.length && connect(closed.shift(), query)
      })

    move(c, reserved)
    c.reserved = () => queue.length
      ? c.execute(queue.shift())
      : move(c, reserved)
    c.reserved.release = true
    // patched by scripts/patch-dependencies.ts: once closed, the connection is the pool's (porsager/postgres#1199)
    let lost = null
    c.onclose = e => {
      lost = e || Errors.connection('CONNECTION_CLOSED', options)
      while (queue.length) queue.shift().reject(lost)
    }

    const sql = Sql(handler)
    sql.release = () => {
      if (lost) return
      c.onclose = null
      c.reserved = null
      onopen(c)
    }

    return sql

    function handler(q) {
      if (lost) return q.reject(lost)
      c.queue === full`,
  },
  {
    name: 'postgres: a transaction whose connection closed runs nothing more on it',
    files: ['src/index.js', 'cjs/src/index.js'],
    root: postgresRoot,
    from: `      , prepare = null

    try {
      await sql.unsafe('begin ' + options.replace(/[^a-z ]/ig, ''), [], { onexecute }).execute()
      return await Promise.race([
        scope(connection, fn),
        new Promise((_, reject) => connection.onclose = reject)
      ])`,
    to: `      , prepare = null
      , lost = null // patched by scripts/patch-dependencies.ts (porsager/postgres#1186)

    try {
      await sql.unsafe('begin ' + options.replace(/[^a-z ]/ig, ''), [], { onexecute }).execute()
      return await Promise.race([
        scope(connection, fn),
        new Promise((_, reject) => connection.onclose = e => {
          lost = e || Errors.connection('CONNECTION_CLOSED', options)
          while (queries.length) queries.shift().reject(lost)
          reject(lost)
        })
      ])`,
  },
  {
    name: 'postgres: a transaction whose connection closed fails its later queries',
    files: ['src/index.js', 'cjs/src/index.js'],
    root: postgresRoot,
    from: `        q.catch(e => uncaughtError || (uncaughtError = e))
        c.queue === full`,
    to: `        q.catch(e => uncaughtError || (uncaughtError = e))
        if (lost) return q.reject(lost) // patched by scripts/patch-dependencies.ts (porsager/postgres#1186)
        c.queue === full`,
  },
  {
    name: 'postgres: a query for a connection whose socket errored fails instead of being dropped',
    files: ['src/connection.js', 'cjs/src/connection.js'],
    root: postgresRoot,
    from: `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))
`,
    to: `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))

    if (socket && socket.destroyed) // patched by scripts/patch-dependencies.ts: 'error' came, 'close' is still to come
      return queryError(q, Errors.connection('CONNECTION_CLOSED', options, socket))
`,
  },
  {
    name: 'postgres: queue removal searches only live slots',
    files: ['src/queue.js', 'cjs/src/queue.js'],
    root: postgresRoot,
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
      process.stderr.write(
        `patch-dependencies: ${fix.name}: ${path} no longer has the code this fixes; review the fix\n`,
      );
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
  process.stderr.write(
    'patch-dependencies: the install is incomplete: update or remove the fix above, then npm ci again\n',
  );
  process.exit(1);
}
