import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from './db.ts';

/**
 * Tracks whether Postgres and NATS are reachable. NATS state follows the connection's status events; Postgres is
 * pinged every `intervalMs`, so /readyz answers from memory and never waits on a dead database.
 */
export function trackReadiness(sql: Sql, nc: NatsConnection, intervalMs = 2000) {
  let databaseUp = true;
  let natsUp = true;
  const ping = async () => {
    try {
      await sql`select 1`;
      databaseUp = true;
    } catch {
      databaseUp = false;
    }
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
