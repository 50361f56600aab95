import { ConfigError } from './config.ts';
import { createLogger } from './log.ts';

/** How long a stop may drain before the process exits anyway. */
const FORCE_EXIT_MS = 15_000;

/**
 * Runs a process's start function and stops it cleanly on SIGTERM or SIGINT (drain in-flight work, close
 * connections, exit 0). A configuration error prints its one line, naming the variable, and exits 78 (EX_CONFIG).
 *
 * The last resort: an exception nothing caught, or a rejection nothing handled, is logged with its cause (an error
 * line naming the service) and then the process stops as on SIGTERM but exits 1. It does not go on: the failed work
 * may have left state half-changed in memory (a batch, a lease, a pool), and a restart by the orchestrator starts
 * clean while Postgres and JetStream keep what was committed; draining first lets the other requests in flight
 * finish. One while stopping (on SIGTERM, or after another) is logged too, and the exit code is 1.
 */
export function runMain(name: string, start: () => Promise<{ close(): Promise<void> }>): void {
  // Always written, whatever LOG_LEVEL says: these lines are why the process stopped.
  const log = createLogger({ service: name }, 'info');
  let running: { close(): Promise<void> } | undefined;
  let stopping = false;
  let failed = false;
  const stop = (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log.info(`${why}: draining`);
    const force = setTimeout(() => process.exit(1), FORCE_EXIT_MS);
    force.unref();
    if (!running) process.exit(code);
    running.close().then(
      () => process.exit(failed ? 1 : code),
      (err) => {
        process.stderr.write(`${name}: error while stopping: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  const lastResort = (what: 'uncaught exception' | 'unhandled rejection') => (reason: unknown) => {
    const err = reason instanceof Error ? reason : new Error(`non-error value: ${String(reason)}`);
    log.error(`${what}; stopping`, { err });
    failed = true;
    stop(what, 1);
  };
  process.on('uncaughtException', lastResort('uncaught exception'));
  process.on('unhandledRejection', lastResort('unhandled rejection'));

  // Called inside the chain, so that a configuration read that throws synchronously lands in the handler below.
  Promise.resolve()
    .then(() => start())
    .then(
      (started) => {
        running = started;
        process.on('SIGTERM', () => stop('SIGTERM', 0));
        process.on('SIGINT', () => stop('SIGINT', 0));
      },
      (err) => {
        if (err instanceof ConfigError) {
          process.stderr.write(`${name}: ${err.message}\n`);
          process.exit(78);
        }
        process.stderr.write(`${name}: failed to start: ${(err as Error).stack ?? err}\n`);
        process.exit(1);
      },
    );
}
