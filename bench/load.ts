import autocannon, { type RequestData } from 'autocannon';
import { Pool } from 'undici';

/** What a scenario sends: the same for the gateway and the bare baseline, only `base` differs. */
export interface Target {
  base: string;
  method: 'GET' | 'POST';
  path: string;
  /** Bearer keys, one per request in turn (the bare server ignores them, but pays for the same bytes). */
  keys: string[];
  /** A fresh body per request (POST), JSON unless `contentType` says otherwise. */
  body?: () => string;
  contentType?: string;
}

export interface Figures {
  /** Completed responses per second (any status). */
  rps: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  statuses: Record<string, number>;
}

function nextRequest(target: Target): (req: RequestData) => RequestData {
  let n = 0;
  return (req) => {
    req.headers['authorization'] = `Bearer ${target.keys[n++ % target.keys.length]}`;
    if (target.body) {
      req.headers['content-type'] = target.contentType ?? 'application/json';
      req.body = target.body();
    }
    return req;
  };
}

/**
 * Closed loop with autocannon: `connections` keep-alive connections, each sending its next request as soon as the
 * previous answer arrives, for `duration` seconds (the highest rate the server sustains at that concurrency).
 * With `overallRate`, autocannon lets each connection send its share of the rate at the start of every second and
 * then pause, so the load arrives in bursts at the top of each second.
 */
export async function closedLoop(
  target: Target,
  opts: { connections: number; duration: number; overallRate?: number },
): Promise<Figures> {
  const result = await autocannon({
    url: target.base,
    connections: opts.connections,
    duration: opts.duration,
    timeout: 30,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
    requests: [{ method: target.method, path: target.path, setupRequest: nextRequest(target) }],
  });
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = Number(count);
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
  };
}

/**
 * Open loop at a steady rate: request i is due at start + i/rate and is sent then (on one of `connections`
 * keep-alive connections, queued in the pool when all are busy), whatever happened to earlier requests. Latency is
 * measured from the moment the request was due, so a server that falls behind shows its queueing delay in full
 * (no coordinated omission). This is the "p99 at that rate" figure. With `onResponse`, each response body is read as
 * text and handed over with the moment it was complete (performance.now()), e.g. to follow up on what was created.
 */
export async function openLoop(
  target: Target,
  opts: {
    connections: number;
    duration: number;
    rate: number;
    onResponse?: (i: number, statusCode: number, body: string, at: number) => void;
    /** Which responses' bodies onResponse needs (default: every one); the others get an empty string. */
    wantBody?: (i: number) => boolean;
  },
): Promise<Figures> {
  const pool = new Pool(target.base, {
    connections: opts.connections,
    pipelining: 1,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const total = Math.max(1, Math.round(opts.rate * opts.duration));
  const latencies = new Float64Array(total);
  const statuses: Record<string, number> = {};
  let completed = 0;
  let settled = 0;
  let errors = 0;
  let non2xx = 0;
  let n = 0;
  let allSettled: () => void = () => {};
  // One header object per key, reused: the generator shares the machine with what it measures, so each request
  // goes straight to the pool's handler interface (undici's request() wraps every response in a stream and a
  // promise chain, about three times the CPU per request of autocannon).
  const headers = target.keys.map((key) => ({
    authorization: `Bearer ${key}`,
    ...(target.body ? { 'content-type': 'application/json' } : {}),
  }));

  const send = (i: number, due: number) => {
    const keep = opts.onResponse !== undefined && (opts.wantBody?.(i) ?? true);
    const chunks: Buffer[] = [];
    let statusCode = 0;
    let over = false;
    const done = (failed: boolean) => {
      if (over) return;
      over = true;
      if (failed) errors++;
      else {
        const at = performance.now();
        latencies[completed++] = at - due;
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
        if (statusCode < 200 || statusCode > 299) non2xx++;
        opts.onResponse?.(i, statusCode, keep ? Buffer.concat(chunks).toString('utf8') : '', at);
      }
      if (++settled === total) allSettled();
    };
    const body = target.body?.();
    try {
      pool.dispatch(
        {
          method: target.method,
          path: target.path,
          headers: headers[i % headers.length]!,
          ...(body !== undefined ? { body } : {}),
        },
        {
          // Its presence tells undici that this handler speaks the current interface.
          onRequestStart() {},
          onResponseStart(_c, code) {
            statusCode = code;
          },
          onResponseData(_c, chunk) {
            if (keep) chunks.push(chunk);
          },
          onResponseEnd() {
            done(false);
          },
          onResponseError() {
            done(true);
          },
        },
      );
    } catch {
      done(true);
    }
  };

  const start = performance.now();
  const interval = 1000 / opts.rate;
  while (n < total) {
    const dueNow = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
    for (; n < dueNow; n++) send(n, start + n * interval);
    // A 1 ms timer rather than a busy loop: the generator shares the machine with what it measures.
    if (n < total) await new Promise((r) => setTimeout(r, 1));
  }
  if (settled < total) await new Promise<void>((resolve) => (allSettled = resolve));
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();

  const sorted = latencies.subarray(0, completed).sort();
  const pct = (p: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
  return { rps: completed / elapsed, p50: pct(50), p99: pct(99), requests: completed, non2xx, errors, statuses };
}
