import { randomBytes } from 'node:crypto';
import type { Sql } from '@platform/shared/db';
import { waitUntil } from './context.ts';
import { newId } from '@platform/shared/ids';

/**
 * The conversion traffic of the events benchmarks (`npm run bench`'s events part and `npm run bench:ab` with
 * BENCH_AB_PART=events): visits of approved affiliates, bodies that name them as cookie_id, and the counts that tell
 * when the commissions service has caught up.
 */

export const EVENTS_PATH = '/api/v1/events';

/** Below the merchant's fraud_max_conversions_per_hour (default 10), so conversion_velocity never fires. */
export const VISIT_USES = 3;

/** A purchase body of about 200 bytes: unique external_id, two-decimal amount in USD, a payload with an e-mail. */
export function eventJson(externalId: string, visitId: string, i: number): string {
  return JSON.stringify({
    event_type: 'purchase',
    external_id: externalId,
    cookie_id: visitId,
    amount: (4990 + (i % 50) * 100) / 100, // 49.9 … 98.9: at most 2 decimals as the shortest JSON form
    currency: 'USD',
    payload: { customer_email: `buyer.${i}@shop.example.com`, sku: `SKU-${1000 + (i % 900)}` },
  });
}

/**
 * Bodies for one event after another, external ids `${prefix}${i}`. Each visit is used VISIT_USES times, a full
 * round of visits apart: conversions in flight together come from different visitors, as in real traffic (the
 * commissions service serialises conversions of one visitor). Past VISIT_USES rounds the visits are reused, which
 * is logged once: conversion_velocity may fire from there on.
 */
export function eventBodies(visits: string[], prefix: string, log: (line: string) => void): () => string {
  let n = 0;
  let wrapped = false;
  return () => {
    const i = n++;
    if (i >= visits.length * VISIT_USES && !wrapped) {
      wrapped = true;
      log(
        `events: more than ${visits.length * VISIT_USES} events: visits are reused from here on (conversion_velocity may fire)`,
      );
    }
    return eventJson(`${prefix}${i}`, visits[i % visits.length]!, i);
  };
}

/**
 * `count` visits of approved affiliates of the merchant, as the events service's insertVisit writes them (created
 * now, expiring after the default 60-day window), 10,000 rows per INSERT … SELECT FROM unnest. Each has an IP hash
 * of its own (64 hex characters, like the HMAC the service stores), so the per-IP velocity rule sees distinct visitors.
 */
export async function seedVisits(sql: Sql, merchantId: string, count: number): Promise<string[]> {
  const affiliates = (
    await sql<{ id: string }[]>`
    select id from affiliates where merchant_id = ${merchantId} and status = 'approved' order by id limit 20000`
  ).map((r) => r.id);
  if (affiliates.length === 0) throw new Error('the bench merchant has no approved affiliate');
  const ids: string[] = [];
  for (let start = 0; start < count; start += 10_000) {
    const batch = Math.min(10_000, count - start);
    const vis: string[] = [];
    const aff: string[] = [];
    const ip: string[] = [];
    for (let j = 0; j < batch; j++) {
      vis.push(newId('vis'));
      aff.push(affiliates[(start + j) % affiliates.length]!);
      ip.push(randomBytes(32).toString('hex'));
    }
    await sql`
      insert into visits (id, merchant_id, affiliate_id, ip_hash, user_agent, fingerprint, landing_url, expires_at)
      select t.id, ${merchantId}, t.affiliate_id, t.ip_hash, 'Mozilla/5.0 (bench)', null, 'https://shop.example.com/?via=bench',
             date_trunc('milliseconds', now()) + make_interval(days => 60)
      from unnest(${vis}::text[], ${aff}::text[], ${ip}::text[]) as t(id, affiliate_id, ip_hash)`;
    ids.push(...vis);
  }
  await sql`analyze visits`;
  return ids;
}

/**
 * Statistics on the conversion tables after some traffic, as autovacuum would have taken them in a database that
 * has been running (migration 008): without them a minutes-old database's generic plans scan where they should probe.
 */
export async function analyzeConversionTables(sql: Sql): Promise<void> {
  await sql`analyze conversion_events, processed_conversions, commissions, affiliate_stats, outbox, visits`;
}

/** Events recorded by the events service and conversions processed by the commissions service, for the merchant. */
export function countEvents(sql: Sql, merchantId: string) {
  return async () => {
    const [row] = await sql<{ recorded: number; processed: number }[]>`
      select (select count(*) from conversion_events where merchant_id = ${merchantId})::int as recorded,
             (select count(*) from processed_conversions where merchant_id = ${merchantId})::int as processed`;
    return row!;
  };
}

/** Waits (at most 5 minutes) until the commissions service has processed every recorded event. */
export async function drainEvents(log: (line: string) => void, counts: ReturnType<typeof countEvents>) {
  let last = await counts();
  const complete = await waitUntil(
    async () => {
      last = await counts();
      return last.processed >= last.recorded;
    },
    300_000,
    100,
  );
  if (!complete) log(`commissions: gave up waiting, ${last.recorded - last.processed} events unprocessed`);
  return { counts: last, at: performance.now(), complete };
}
