import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from './db.ts';

/**
 * Tracks whether Postgres and NATS are reachable. NATS state follows the connection's status events; Postgres is
 * pinged every `intervalMs`, so /readyz answers from memory and never waits on a dead database.
 */
export function trackReadiness(sql: Sql, nc: NatsConnection, intervalMs = 2000) {
  let databaseUp = true;
  let natsUp = true;
  // A ping that has not answered by then counts as down: when the database goes away, the driver can leave a
  // query waiting for a connection that will not come back, and a ping awaited without a bound would keep the last
  // answer (ready) for ever. Shorter than the interval, so that pings never overlap.
  const timeoutMs = Math.max(100, Math.floor(intervalMs / 2));
  const ping = async () => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, false);
    });
    databaseUp = await Promise.race([
      sql`select 1`.then(
        () => true,
        () => false,
      ),
      timedOut,
    ]);
    clearTimeout(timer);
  };
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') natsUp = false;
      else if (s.type === 'reconnect') natsUp = true;
    }
  })();
  const timer = setInterval(() => void ping(), intervalMs);
  timer.unref();
  return {
    ready: () => databaseUp && natsUp && !nc.isClosed() && !nc.isDraining(),
    stop: () => clearInterval(timer),
  };
}
