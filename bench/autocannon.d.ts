/**
 * The slice of autocannon's programmatic API (v8) that the benchmark uses. The package ships no types and
 * @types/autocannon is not a dependency; only what bench/ calls is declared here.
 */
declare module 'autocannon' {
  export interface RequestData {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: string | Buffer;
  }

  export interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Called before each request is written; returns the request to send (a falsy value restarts the sequence). */
    setupRequest?: (request: RequestData, context: Record<string, unknown>) => RequestData;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: RequestSpec[];
    /** Requests per second over all connections (each connection sends at most its share per one-second tick). */
    overallRate?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    pipelining?: number;
    title?: string;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title?: string;
    /** Per-second samples of completed requests; `total` is every completed request. */
    requests: Histogram & { sent: number };
    /** Milliseconds; 2xx responses only. */
    latency: Histogram;
    throughput: Histogram;
    /** Seconds, as measured. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
