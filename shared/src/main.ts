import { ConfigError } from './config.ts';

/**
 * Runs a process's start function and stops it cleanly on SIGTERM or SIGINT (drain in-flight work, close
 * connections, exit 0). A configuration error prints its one line, naming the variable, and exits 78 (EX_CONFIG).
 */
export function runMain(name: string, start: () => Promise<{ close(): Promise<void> }>): void {
  // Called inside the chain, so that a configuration read that throws synchronously lands in the handler below.
  Promise.resolve()
    .then(() => start())
    .then(
      (running) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) return;
          stopping = true;
          process.stdout.write(
            JSON.stringify({
              level: 'info',
              time: new Date().toISOString(),
              service: name,
              msg: `${signal}: draining`,
            }) + '\n',
          );
          const force = setTimeout(() => process.exit(1), 15_000);
          force.unref();
          running.close().then(
            () => process.exit(0),
            (err) => {
              process.stderr.write(`${name}: error while stopping: ${(err as Error).message}\n`);
              process.exit(1);
            },
          );
        };
        process.on('SIGTERM', () => stop('SIGTERM'));
        process.on('SIGINT', () => stop('SIGINT'));
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
