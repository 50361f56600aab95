import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The webhook receiver of bench/webhooks.ts, in a process of its own so that it does not share an event loop with
 * the load generator: node:http on 127.0.0.1, answering every POST at once.
 *
 *   /ok/{tag}/…    → 200 "ok"
 *   /fail/{tag}/…  → 503 "unavailable"
 *
 * Per tag it counts requests, keeps the first and last arrival and, for each webhook-id seen for the first time,
 * the arrival time minus `data.bench_sent_at` of the body (epoch ms, stamped by the bench when it produced the
 * event): the event-to-first-attempt latency. Arrival is when the request's headers were parsed, in epoch ms
 * (performance.timeOrigin + performance.now(), comparable with the bench process's stamps on the same machine).
 *
 * Started by bench/webhooks.ts with an IPC channel: it answers { port } once listening, then answers
 * { id, stats } to { id, cmd: 'stats', tag, reset? } (reset clears the tag after reading it, and only then are the
 * latencies sent: progress polls stay small).
 */

export interface TagStats {
  tag: string;
  requests: number;
  /** Requests that repeated a webhook-id already seen on this tag (retries, or a duplicate delivery). */
  repeats: number;
  /** Epoch ms; null when nothing arrived. */
  first: number | null;
  last: number | null;
  /** Event-to-first-attempt latencies (ms) of the requests whose body carried data.bench_sent_at (on reset only). */
  latencies: number[];
}

export interface StatsRequest {
  id: number;
  cmd: 'stats';
  tag: string;
  reset?: boolean;
}

if (!process.send) {
  process.stderr.write('bench/receiver.ts is started by bench/webhooks.ts (it needs an IPC channel)\n');
  process.exit(2);
}

interface Tally {
  requests: number;
  repeats: number;
  first: number | null;
  last: number | null;
  seen: Set<string>;
  latencies: number[];
}

const tallies = new Map<string, Tally>();
const tally = (tag: string): Tally => {
  let t = tallies.get(tag);
  if (!t) {
    t = { requests: 0, repeats: 0, first: null, last: null, seen: new Set(), latencies: [] };
    tallies.set(tag, t);
  }
  return t;
};

const OK = Buffer.from('ok');
const UNAVAILABLE = Buffer.from('unavailable');

function handle(req: IncomingMessage, res: ServerResponse): void {
  const at = performance.timeOrigin + performance.now();
  const [, verdict = '', tag = ''] = (req.url ?? '').split('/');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const t = tally(tag);
    t.requests++;
    t.first ??= at;
    t.last = at;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') {
      if (t.seen.has(id)) {
        t.repeats++;
      } else {
        t.seen.add(id);
        try {
          const sent = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { bench_sent_at?: unknown } })
            .data?.bench_sent_at;
          if (typeof sent === 'number') t.latencies.push(at - sent);
        } catch {
          // not JSON: counted, no latency
        }
      }
    }
    const ok = verdict === 'ok';
    const body = ok ? OK : UNAVAILABLE;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain', 'content-length': body.length });
    res.end(body);
  });
}

const server = createServer({ keepAliveTimeout: 65_000 }, handle);
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});

process.on('message', (m: StatsRequest) => {
  if (m?.cmd !== 'stats') return;
  const t = tallies.get(m.tag);
  const stats: TagStats = {
    tag: m.tag,
    requests: t?.requests ?? 0,
    repeats: t?.repeats ?? 0,
    first: t?.first ?? null,
    last: t?.last ?? null,
    latencies: m.reset ? (t?.latencies ?? []) : [],
  };
  if (m.reset) tallies.delete(m.tag);
  process.send!({ id: m.id, stats });
});

// The parent closes the channel (or dies): stop with it.
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
