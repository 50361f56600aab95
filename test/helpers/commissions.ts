import { randomBytes } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  domainEventSubject,
  outboxSubject,
  streamName,
  type ConversionRecorded,
  type DomainEvent,
  type DomainEventType,
} from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { encodeJson } from '@platform/shared/nats';
import { enqueueEvent } from '@platform/shared/outbox';
import { loadCommissionsConfig } from '@platform/commissions/config';
import { startCommissionsService, type CommissionsService } from '@platform/commissions/service';
import { createTier, setMerchantSettings } from '../../scripts/admin/programme.ts';
import { captureLogger, eventually, type Platform, type TestLike } from './platform.ts';

/**
 * Helpers for the commissions tests. Conversions reach the service the way the events service sends them: as
 * `conversion.recorded` outbox rows that a relay publishes onto the CONVERSIONS stream (or, to exercise duplicates,
 * published directly with a message id of the test's choosing). Nothing of our stack is replaced.
 */

/** A settable clock: tests move time forward to end hold periods. */
export function testClock(start = new Date()) {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
    },
    set(date: Date) {
      current = date.getTime();
    },
  };
}

export const DAY_MS = 86_400_000;

export async function startCommissions(
  t: TestLike,
  platform: Platform,
  opts: { now?: () => Date; env?: Record<string, string> } = {},
): Promise<{ service: CommissionsService; logs: string[] }> {
  const logger = captureLogger('commissions');
  const service = await startCommissionsService(
    loadCommissionsConfig({ ...platform.env, ...opts.env }),
    logger.log,
    opts.now ? { now: opts.now } : {},
  );
  t.teardown(() => service.close());
  return { service, logs: logger.lines };
}

/** A conversion.recorded payload with plausible defaults; `affiliate_id` decides attribution. */
export function conversion(over: Partial<ConversionRecorded> & { affiliate_id: string | null }): ConversionRecorded {
  return {
    event_id: newId('evt'),
    event_type: 'purchase',
    external_id: `order_${randomBytes(6).toString('hex')}`,
    amount: '100.00',
    currency: 'USD',
    attributed_by: over.affiliate_id ? 'cookie' : null,
    visit: null,
    customer_email: null,
    created_at: new Date().toISOString(),
    ...over,
  };
}

/** Writes conversion.recorded outbox rows in one transaction; the running relays publish them. */
export async function recordConversions(
  sql: Sql,
  merchantId: string,
  conversions: ConversionRecorded[],
): Promise<void> {
  await sql.begin(async (tx) => {
    for (const c of conversions) await enqueueEvent(tx, merchantId, 'conversion.recorded', c);
  });
}

/** Publishes one envelope straight onto the CONVERSIONS stream (JetStream dedupes on the message id only). */
export async function publishConversion(
  nc: NatsConnection,
  prefix: string,
  merchantId: string,
  data: ConversionRecorded,
  messageId = newId('msg'),
) {
  const envelope: DomainEvent<ConversionRecorded, 'conversion.recorded'> = {
    id: messageId,
    type: 'conversion.recorded',
    created_at: new Date().toISOString(),
    merchant_id: merchantId,
    data,
  };
  return jetstream(nc).publish(outboxSubject(prefix, 'conversion.recorded'), encodeJson(envelope), {
    msgID: messageId,
  });
}

/** Every event of a type on the DOMAIN_EVENTS stream, oldest first, read with an ordered consumer. */
export async function streamEvents<D = Record<string, unknown>>(
  nc: NatsConnection,
  prefix: string,
  type: DomainEventType,
): Promise<DomainEvent<D>[]> {
  const js = jetstream(nc);
  const consumer = await js.consumers.get(streamName(prefix, 'DOMAIN_EVENTS'), {
    filter_subjects: domainEventSubject(prefix, type),
  });
  const events: DomainEvent<D>[] = [];
  for (;;) {
    const batch = await consumer.fetch({ max_messages: 1000, expires: 1000 });
    let received = 0;
    let caughtUp = false;
    for await (const m of batch) {
      received++;
      events.push(m.json<DomainEvent<D>>());
      if (m.info.pending === 0) {
        caughtUp = true;
        break;
      }
    }
    if (caughtUp || received === 0) return events;
  }
}

/** Waits until the stream holds at least `count` events of the type matching `where`, and returns those. */
export async function awaitStreamEvents<D = Record<string, unknown>>(
  platform: Platform,
  type: DomainEventType,
  where: (e: DomainEvent<D>) => boolean,
  count: number,
  timeoutMs = 15_000,
): Promise<DomainEvent<D>[]> {
  return eventually(
    async () => {
      const found = (await streamEvents<D>(platform.nc, platform.prefix, type)).filter(where);
      return found.length >= count ? found : undefined;
    },
    timeoutMs,
    `${count} ${type} event(s)`,
  );
}

/** Waits until the service has processed (committed) these conversion events. */
export async function awaitProcessed(
  sql: Sql,
  merchantId: string,
  eventIds: string[],
  timeoutMs = 15_000,
): Promise<void> {
  await eventually(
    async () => {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from processed_conversions where merchant_id = ${merchantId} and event_id in ${sql(eventIds)}`;
      return row!.n === eventIds.length ? true : undefined;
    },
    timeoutMs,
    `${eventIds.length} processed conversion(s)`,
  );
}

export interface CommissionDbRow {
  id: string;
  affiliate_id: string;
  event_id: string;
  level: number;
  amount: string;
  rate: string | null;
  currency: string;
  status: string;
  held: boolean;
  void_reason: string | null;
}

export async function commissionsOfEvent(sql: Sql, merchantId: string, eventId: string): Promise<CommissionDbRow[]> {
  return sql<CommissionDbRow[]>`
    select id, affiliate_id, event_id, level, amount::text, rate::text, currency, status, held, void_reason
    from commissions where merchant_id = ${merchantId} and event_id = ${eventId} order by level`;
}

/** An affiliate created through the API (so it is the affiliates service's own row). */
export async function createAffiliate(
  client: { post: (path: string, body: unknown) => Promise<{ status: number; body: any }> },
  body: Record<string, unknown>,
): Promise<{ id: string; email: string; tier_id: string | null }> {
  const res = await client.post('/api/v1/affiliates', body);
  if (res.status !== 201) throw new Error(`creating an affiliate answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export { createTier, setMerchantSettings };
