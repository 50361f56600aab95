import { Gauge, type Registry } from 'prom-client';

/** A scrape never waits longer than this on the database: /metrics must answer while Postgres is gone. */
const READ_TIMEOUT_MS = 1000;

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
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<null>((resolve) => {
        timer = setTimeout(resolve, READ_TIMEOUT_MS, null);
      });
      const value = await Promise.race([opts.read().catch(() => null), timedOut]);
      clearTimeout(timer);
      if (value !== null) this.set(value);
    },
  });
}
