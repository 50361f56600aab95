import { connect, createServer, type Server, type Socket } from 'node:net';
import type { TestLike } from './platform.ts';

/**
 * A TCP proxy on a loopback port of its own in front of `target`, that a test makes unreachable and restores on the
 * same port, without touching the shared server behind it. Two ways of being unreachable:
 * - `refuse`: every connection reset, new ones refused (a server down, a port closed);
 * - `blackhole`: nothing answers and nothing fails (a dropped route, a firewall that swallows packets): open
 *   connections stop forwarding in both directions (what is sent waits in the proxy), new ones are accepted and get
 *   no answer; `restore` forwards what waited and connects what was held, as a network that heals does.
 */
export async function startTcpProxy(t: TestLike, target: { host: string; port: number }) {
  interface Pair {
    client: Socket;
    upstream: Socket | null;
  }
  const pairs = new Set<Pair>();
  let server: Server | null = null;
  let port = 0;
  let blackholed = false;

  const drop = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };
  const forward = (pair: Pair) => {
    const upstream = pair.upstream ?? connect(target.port, target.host);
    if (!pair.upstream) {
      pair.upstream = upstream;
      upstream.on('error', () => drop(pair)).on('close', () => drop(pair));
    }
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
  };
  const hold = (pair: Pair) => {
    pair.client.unpipe();
    pair.upstream?.unpipe();
    pair.client.pause();
    pair.upstream?.pause();
  };

  const listen = async () => {
    const s = createServer((client) => {
      const pair: Pair = { client, upstream: null };
      pairs.add(pair);
      client.on('error', () => drop(pair)).on('close', () => drop(pair));
      if (blackholed) client.pause();
      else forward(pair);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    server = s;
    port = (s.address() as { port: number }).port;
  };

  const refuse = async () => {
    const s = server;
    server = null;
    if (!s) return;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    for (const pair of [...pairs]) {
      pair.client.resetAndDestroy();
      pair.upstream?.resetAndDestroy();
      pairs.delete(pair);
    }
    await closed;
  };

  await listen();
  t.teardown(refuse);
  return {
    port,
    /** Resets every connection through the proxy and refuses new ones until `restore`. */
    refuse,
    /** Forwards nothing and fails nothing until `restore`. */
    blackhole() {
      blackholed = true;
      for (const pair of pairs) hold(pair);
    },
    /** Reachable again, on the same port. */
    async restore() {
      if (blackholed) {
        blackholed = false;
        for (const pair of pairs) forward(pair);
      }
      if (!server) await listen();
    },
  };
}
