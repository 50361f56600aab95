import type { Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { ensurePartitions } from '@platform/shared/partitions';
import { visitPartitions } from '@platform/events/queries/visits';
import { conversionEventPartitions } from '@platform/events/queries/conversion-events';
import { eventually } from '../helpers/platform.ts';

export interface ClickFacts {
  affiliateId: string;
  at?: Date;
  country?: string | null;
  referrerHost?: string | null;
  device?: string | null;
  landingUrl?: string | null;
}

/**
 * A visit row as the events service writes one, at any time (back-dated clicks, months ago): the columns the
 * analytics read, with the partitions of its month made first. Answers its id, a cookie_id when made now.
 */
export async function insertClick(sql: Sql, merchantId: string, c: ClickFacts): Promise<string> {
  const at = c.at ?? new Date();
  await ensurePartitions(sql, visitPartitions, at);
  const id = newId('vis');
  await sql`
    insert into visits (id, merchant_id, affiliate_id, landing_url, referrer_host, country, device, created_at, expires_at)
    values (${id}, ${merchantId}, ${c.affiliateId}, ${c.landingUrl ?? null}, ${c.referrerHost ?? null},
            ${c.country ?? null}, ${c.device ?? null}, ${at}, ${at}::timestamptz + interval '30 days')`;
  return id;
}

/** A conversion event row recorded at `at` (a late event, back-dated), as the events service stores one. */
export async function insertEvent(
  sql: Sql,
  merchantId: string,
  e: { at: Date; affiliateId: string | null; eventType?: string; amount: string; currency?: string; coupon?: string },
): Promise<string> {
  await ensurePartitions(sql, conversionEventPartitions, e.at);
  const id = newId('evt');
  await sql`
    insert into conversion_events (id, merchant_id, event_type, external_id, coupon, amount, currency, payload,
                                   affiliate_id, attributed_by, body_hash, created_at)
    values (${id}, ${merchantId}, ${e.eventType ?? 'purchase'}, ${id}, ${e.coupon ?? null}, ${e.amount},
            ${e.currency ?? 'USD'}, '{}', ${e.affiliateId}, ${e.affiliateId ? 'coupon' : null}, '\\x00', ${e.at})`;
  return id;
}

/** Waits until the drain has moved every pending fact into the rollups. */
export const rolledUp = (sql: Sql) =>
  eventually(
    async () => {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from analytics_pending`;
      return row!.n === 0 ? true : undefined;
    },
    15_000,
    'the analytics drain',
  );
