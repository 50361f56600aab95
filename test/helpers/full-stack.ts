import { jetstreamManager } from '@nats-io/jetstream';
import type { Sql } from '@platform/shared/db';
import type { ServiceRuntime } from '@platform/shared/service';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { createCoupon, createAffiliate, setSettings } from '../events/setup.ts';
import type { ApiClient, ApiResponse } from './client.ts';
import { startCommissions } from './commissions.ts';
import { captureLogger, eventually, startPlatform, type Platform, type TestLike } from './platform.ts';
import { startReceiver } from './receiver.ts';
import { startDispatcher } from './webhooks.ts';

/**
 * Every service of the platform in this process (gateway, affiliates, events, commissions, dispatcher) on the
 * file's own database and NATS prefix, a merchant with one affiliate and its coupon, and a webhook receiver
 * subscribed to affiliate.created and commission.created: what the fault tests drive and watch.
 */
export async function startFullStack(
  t: TestLike,
  opts: {
    natsUrl?: string;
    env?: Record<string, string>;
    /** The services' DATABASE_URL from the file's database URL (a test's TCP proxy, say); the test's own pool connects directly. */
    serviceDatabaseUrl?: (url: string) => string;
    /** The merchant's plan and key limit (bursts and their retries outgrow the growth plan's default limit). */
    merchant?: Parameters<Platform['merchant']>[0];
  } = {},
) {
  const platform = await startPlatform(t, {
    natsUrl: opts.natsUrl,
    env: { LOG_LEVEL: 'info', ...opts.env },
    serviceDatabaseUrl: opts.serviceDatabaseUrl,
  });
  const eventsLog = captureLogger('events');
  const events = await startEventsService(loadEventsConfig({ ...platform.env }), eventsLog.log);
  t.teardown(() => events.close());
  const commissions = await startCommissions(t, platform);
  const dispatcher = await startDispatcher(t, platform, opts.env);
  const merchant = await platform.merchant(opts.merchant);
  await setSettings(platform.sql, merchant.id, { default_rate: 0.1 });
  const affiliate = await createAffiliate(merchant.client, 'lead@example.com');
  await createCoupon(merchant.client, affiliate.id, 'LEAD10');
  const receiver = await startReceiver(t);
  const endpoint = await merchant.client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['affiliate.created', 'commission.created'],
  });
  if (endpoint.status !== 201) throw new Error(`creating the endpoint answered ${endpoint.status}: ${endpoint.text}`);
  const services: Record<string, ServiceRuntime> = {
    affiliates: platform.affiliates,
    events,
    commissions: commissions.service,
    dispatcher: dispatcher.dispatcher,
  };
  return {
    platform,
    services,
    merchant,
    affiliate,
    receiver,
    logs: { events: eventsLog.lines, commissions: commissions.logs, dispatcher: dispatcher.logs },
  };
}

export type FullStack = Awaited<ReturnType<typeof startFullStack>>;

/** POSTs `count` purchase events attributed by the coupon; the responses, in order. */
export async function postEvents(
  client: ApiClient,
  tag: string,
  count: number,
  concurrency = 10,
): Promise<ApiResponse[]> {
  const responses: ApiResponse[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) responses[i] = await client.post('/api/v1/events', eventBody(tag, i));
    }),
  );
  return responses;
}

export const eventBody = (tag: string, i: number) => ({
  event_type: 'purchase',
  external_id: `${tag}-${i}`,
  amount: 100,
  currency: 'USD',
  coupon: 'lead10',
});

/** Level-0 commissions per external order id of the merchant, for orders whose id starts with `tag`. */
export async function levelZeroCounts(sql: Sql, merchantId: string, tag: string): Promise<Map<string, number>> {
  const rows = await sql<{ order_id: string; n: number }[]>`
    select order_id, count(*)::int as n from commissions
    where merchant_id = ${merchantId} and level = 0 and order_id like ${tag + '-%'}
    group by order_id`;
  return new Map(rows.map((r) => [r.order_id, r.n]));
}

/** Waits until every one of `orderIds` has a level-0 commission; how long that took. */
export async function awaitCommissions(
  sql: Sql,
  merchantId: string,
  tag: string,
  orderIds: string[],
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  await eventually(
    async () => {
      const counts = await levelZeroCounts(sql, merchantId, tag);
      return orderIds.every((id) => counts.has(id)) ? true : undefined;
    },
    timeoutMs,
    `level-0 commissions of ${orderIds.length} orders`,
  );
  return Date.now() - started;
}

/** The ids of the webhook messages the receiver got (webhook-id), by event type. */
export function receivedIds(stack: FullStack, type: string): Set<string> {
  return new Set(stack.receiver.received.filter((r) => r.type === type).map((r) => r.id));
}

/** The outbox message ids of the merchant's affiliate.created (by e-mail) and commission.created (by order) of `tag`. */
export async function outboxIds(
  sql: Sql,
  merchantId: string,
  type: 'affiliate.created' | 'commission.created',
  tag: string,
): Promise<string[]> {
  const field = type === 'affiliate.created' ? 'email' : 'order_id';
  const rows = await sql<{ id: string }[]>`
    select id from outbox where merchant_id = ${merchantId} and type = ${type} and data->>${field} like ${tag + '-%'} order by seq`;
  return rows.map((r) => r.id);
}

/** Deletes the file's streams (every consumer goes with them), or only the named consumers. */
export async function deleteStreams(platform: Platform): Promise<string[]> {
  const jsm = await jetstreamManager(platform.nc);
  const deleted: string[] = [];
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(`${platform.prefix.toUpperCase()}_`)) {
      await jsm.streams.delete(s.config.name);
      deleted.push(s.config.name);
    }
  }
  return deleted.sort();
}

export async function deleteConsumer(platform: Platform, stream: string, durable: string): Promise<void> {
  const jsm = await jetstreamManager(platform.nc);
  await jsm.consumers.delete(stream, durable);
}
