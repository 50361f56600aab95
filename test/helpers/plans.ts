import postgres from 'postgres';
import { newId } from '@platform/shared/ids';
import type { NewConversionEvent } from '@platform/events/queries/conversion-events';

/**
 * A connection that explains every statement it runs (auto_explain, with ANALYZE) and `plans`, which answers the
 * plans it sent back since the last call: a query is run as the services run it, and its plan read after.
 */
export async function explainingConnection(
  t: { teardown(fn: () => unknown): void },
  url: string,
): Promise<{ sql: postgres.Sql; plans: () => string }> {
  const sent: string[] = [];
  const sql = postgres(url, { max: 1, onnotice: (n) => sent.push(String(n['message'])) });
  t.teardown(() => sql.end({ timeout: 1 }));
  await sql`load 'auto_explain'`;
  await sql`set auto_explain.log_min_duration = 0`;
  await sql`set auto_explain.log_analyze = on`;
  await sql`set auto_explain.log_level = 'notice'`;
  return { sql, plans: () => sent.splice(0).join('\n') };
}

/** A purchase of `amount` USD with no attribution, as insertEventsWithOutbox takes it. */
export function purchase(merchantId: string, externalId: string, amount = '10.00'): NewConversionEvent {
  return {
    id: newId('evt'),
    merchantId,
    eventType: 'purchase',
    externalId,
    cookieId: null,
    coupon: null,
    amount,
    currency: 'USD',
    payload: {},
    affiliateId: null,
    attributedBy: null,
    visitId: null,
    bodyHash: Buffer.alloc(32, amount),
    messageId: newId('msg'),
    visit: null,
    customerEmail: null,
    traceContext: null,
  };
}
