import { Gauge, type Registry } from 'prom-client';

/** A scrape never waits longer than this on the database: /metrics must answer while Postgres is gone. */
const READ_TIMEOUT_MS = 1000;

/** `read`'s answer, or null when it fails or takes longer than READ_TIMEOUT_MS. */
async function readWithin<T>(read: () => Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((resolve) => {
    timer = setTimeout(resolve, READ_TIMEOUT_MS, null);
  });
  const value = await Promise.race([read().catch(() => null), timedOut]);
  clearTimeout(timer);
  return value;
}

/**
 * A gauge read from Postgres when /metrics is scraped (never on a hot path). A read that fails or takes longer than
 * READ_TIMEOUT_MS leaves the last value, so a database outage shows as the other gauges' staleness, not as zeros.
 */
export function databaseGauge(opts: {
  registry: Registry;
  name: string;
  help: string;
  read: () => Promise<number>;
}): void {
  new Gauge({
    name: opts.name,
    help: opts.help,
    registers: [opts.registry],
    async collect() {
      const value = await readWithin(opts.read);
      if (value !== null) this.set(value);
    },
  });
}

/**
 * A gauge with labels, read from Postgres when /metrics is scraped: each read replaces every series, so a label set
 * it no longer answers (an endpoint whose backlog is gone) disappears. A read that fails or times out leaves the
 * last series, as databaseGauge does.
 */
export function labelledDatabaseGauge<L extends string>(opts: {
  registry: Registry;
  name: string;
  help: string;
  labelNames: readonly L[];
  read: () => Promise<{ labels: Record<L, string>; value: number }[]>;
}): void {
  new Gauge({
    name: opts.name,
    help: opts.help,
    labelNames: opts.labelNames,
    registers: [opts.registry],
    async collect() {
      const series = await readWithin(opts.read);
      if (series === null) return;
      this.reset();
      for (const s of series) this.set(s.labels, s.value);
    },
  });
}
