import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestLike } from './platform.ts';

const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

/** A loopback port nobody listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A nats-server with JetStream of the test's own, on its own port and store (never the shared server), that the
 * test can kill and start again: on the same store, or on an empty one (as after losing its storage). `config`:
 * nats-server configuration text (an authorization block, TLS) the server starts with besides its flags.
 */
export async function startNatsServer(t: TestLike, opts: { config?: string } = {}) {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-test-'));
  let child: ChildProcess | null = null;
  const output: string[] = [];
  const configArgs: string[] = [];
  if (opts.config !== undefined) {
    const file = join(storeDir, 'nats.conf');
    writeFileSync(file, opts.config, { mode: 0o600 });
    configArgs.push('-c', file);
  }

  const start = async () => {
    const c = spawn(NATS_SERVER, [...configArgs, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`nats-server did not start in 15 s:\n${output.slice(-20).join('')}`)),
        15_000,
      );
      const onData = (chunk: Buffer) => {
        output.push(chunk.toString());
        if (/Server is ready/.test(chunk.toString())) {
          clearTimeout(timer);
          resolve();
        }
      };
      c.stdout.on('data', onData);
      c.stderr.on('data', onData);
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited with ${code}:\n${output.slice(-20).join('')}`));
      });
    });
  };

  /** Kills the server at once (SIGKILL: nothing flushed that was not already). */
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await exited;
  };

  await start();
  t.teardown(async () => {
    await kill();
    rmSync(storeDir, { recursive: true, force: true });
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    /** The server's store (-sd): JetStream keeps its files under `jetstream/`. */
    storeDir,
    kill,
    /** Starts the server again on its port; `emptyStore` first deletes everything JetStream had stored. */
    async restart(opts: { emptyStore?: boolean } = {}) {
      await kill();
      if (opts.emptyStore) rmSync(join(storeDir, 'jetstream'), { recursive: true, force: true });
      await start();
    },
  };
}
