import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { outboxSubject, type DomainEvent, type OutboxEventType } from './catalogue.ts';
import type { Queryable, Sql } from './db.ts';
import { newId } from './ids.ts';
import type { Logger } from './log.ts';
import { encodeJson } from './nats.ts';

const NOTIFY_CHANNEL = 'outbox_pending';

/**
 * Records an event (a domain event, or an internal conversion event) in the caller's transaction. It reaches JetStream only after the transaction commits
 * (the relay reads committed rows), and a rolled-back change never emits its event.
 */
export async function enqueueEvent<D extends Record<string, unknown>, T extends OutboxEventType>(
  tx: Queryable,
  merchantId: string,
  type: T,
  data: D,
): Promise<DomainEvent<D, T>> {
  const id = newId('msg');
  const [row] = await tx<{ created_at: Date }[]>`
    insert into outbox (id, merchant_id, type, data)
    values (${id}, ${merchantId}, ${type}, ${tx.json(data as never)})
    returning created_at`;
  await tx`select pg_notify(${NOTIFY_CHANNEL}, '')`;
  return { id, type, created_at: row!.created_at.toISOString(), merchant_id: merchantId, data };
}

export interface OutboxRelay {
  /** Publishes everything pending now; resolves with how many rows it published. */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

interface OutboxRow {
  seq: string;
  id: string;
  merchant_id: string;
  type: OutboxEventType;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * Publishes committed outbox rows to their streams (catalogue.outboxSubject), oldest first, and marks them published.
 * Rows are claimed with FOR UPDATE SKIP LOCKED, so relays in several replicas share the work. A crash after
 * publishing but before marking re-publishes the row later; Nats-Msg-Id (the envelope id) makes JetStream store
 * it once. Woken by NOTIFY on commit, and by a timer in case a notification was missed.
 */
export function startOutboxRelay(opts: {
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  log: Logger;
  batchSize?: number;
  pollMs?: number;
}): OutboxRelay {
  const { sql, nc, prefix, log } = opts;
  const js = jetstream(nc);
  const batchSize = opts.batchSize ?? 200;
  let stopped = false;
  let running: Promise<number> | null = null;
  let again = false;

  const publishBatch = async (): Promise<number> =>
    sql.begin(async (tx) => {
      const rows = await tx<OutboxRow[]>`
        select seq, id, merchant_id, type, data, created_at from outbox
        where published_at is null
        order by seq
        limit ${batchSize}
        for update skip locked`;
      if (rows.length === 0) return 0;
      await Promise.all(
        rows.map((row) => {
          const envelope: DomainEvent<Record<string, unknown>, OutboxEventType> = {
            id: row.id,
            type: row.type,
            created_at: row.created_at.toISOString(),
            merchant_id: row.merchant_id,
            data: row.data,
          };
          return js.publish(outboxSubject(prefix, row.type), encodeJson(envelope), { msgID: row.id });
        }),
      );
      await tx`update outbox set published_at = now() where seq in ${tx(rows.map((r) => r.seq))}`;
      return rows.length;
    });

  const flush = async (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          let n: number;
          do {
            n = await publishBatch();
            total += n;
          } while (n === batchSize && !stopped);
        } while (again && !stopped);
      } catch (err) {
        log.warn('outbox relay could not publish; will retry', { err: (err as Error).message });
      } finally {
        running = null;
      }
      if (total > 0) log.debug('outbox relay published', { count: total });
      return total;
    })();
    return running;
  };

  const timer = setInterval(() => void flush(), opts.pollMs ?? 1000);
  timer.unref();
  const listening = sql.listen(NOTIFY_CHANNEL, () => void flush()).catch((err) => {
    log.warn('outbox relay could not LISTEN; polling only', { err: (err as Error).message });
    return null;
  });
  void flush();

  return {
    flush,
    async stop() {
      stopped = true;
      clearInterval(timer);
      const l = await listening;
      await l?.unlisten().catch(() => {});
      if (running) await running;
    },
  };
}
