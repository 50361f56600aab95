import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './nats-server.ts';
import { bestEffort, sleep, type TestLike } from './platform.ts';

const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

/** One server of a test cluster: its client URL, its name (as stream info's cluster.leader gives it), its store. */
export interface ClusterNode {
  name: string;
  url: string;
  /** Kills it at once (SIGKILL: nothing flushed that was not already). */
  kill(): Promise<void>;
  /** Stops it as an upgrade does (SIGTERM: clients told, the store flushed). */
  stop(): Promise<void>;
  /** Starts it again on the same port, routes and store. */
  start(): Promise<void>;
  running(): boolean;
}

/**
 * A nats-server cluster with JetStream of the test's own on loopback: `size` servers routed to each other, each on its
 * own client and route ports and file store in a temporary directory. Each node can be killed and started again on
 * the same store, as a crashed or upgraded server is.
 */
export async function startNatsCluster(t: TestLike, size = 3) {
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })),
  );
  const clusterName = `c${ports[0]!.client}`;
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`).join(',');
  const nodes: ClusterNode[] = ports.map((port, i) => {
    const name = `n${i + 1}-${port.client}`;
    const storeDir = mkdtempSync(join(tmpdir(), `nats-cluster-${name}-`));
    let child: ChildProcess | null = null;
    const output: string[] = [];
    const running = () => child !== null && child.exitCode === null && child.signalCode === null;
    const signal = async (sig: NodeJS.Signals) => {
      const c = child;
      if (!c || !running()) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill(sig);
      await exited;
    };
    const kill = () => signal('SIGKILL');
    const start = async () => {
      await kill();
      // -js: JetStream on; -n: the server name the JetStream meta group and stream leaders are known by.
      const args = ['-js', '-n', name, '-a', '127.0.0.1', '-p', String(port.client), '-sd', storeDir];
      args.push('--cluster_name', clusterName, '--cluster', `nats://127.0.0.1:${port.route}`, '--routes', routes);
      const c = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`nats-server ${name} did not start in 15 s:\n${output.slice(-20).join('')}`)),
          15_000,
        );
        const onData = (chunk: Buffer) => {
          output.push(chunk.toString());
          if (output.length > 200) output.splice(0, 100);
          if (/Server is ready/.test(chunk.toString())) {
            clearTimeout(timer);
            resolve();
          }
        };
        c.stdout.on('data', onData);
        c.stderr.on('data', onData);
        c.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`nats-server ${name} exited with ${code}:\n${output.slice(-20).join('')}`));
        });
      });
    };
    t.teardown(
      bestEffort(`stopping nats-server ${name}`, async () => {
        await kill();
        rmSync(storeDir, { recursive: true, force: true });
      }),
    );
    return { name, url: `nats://127.0.0.1:${port.client}`, kill, stop: () => signal('SIGTERM'), start, running };
  });
  await Promise.all(nodes.map((n) => n.start()));
  await jetStreamReady(nodes.map((n) => n.url));
  return {
    nodes,
    /** Every node's client URL, comma-separated: what NATS_URL takes as its seed servers. */
    urls: nodes.map((n) => n.url).join(','),
    node(name: string): ClusterNode {
      const node = nodes.find((n) => n.name === name);
      if (!node) throw new Error(`no node named ${name} in the cluster`);
      return node;
    },
  };
}

/**
 * Waits until the cluster's JetStream answers (its meta group has elected a leader): a stream created before that is
 * refused, and a service starting then would stop at its first stream.
 */
async function jetStreamReady(urls: string[], timeoutMs = 30_000): Promise<void> {
  const nc = await connect({ servers: urls });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 2000 });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await jsm.getAccountInfo();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error("the cluster's JetStream did not answer in time", { cause: err });
        await sleep(200);
      }
    }
  } finally {
    await nc.close();
  }
}
