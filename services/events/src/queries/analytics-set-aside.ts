import type { Queryable } from '@platform/shared/db';

/** A pending fact the drain moved to analytics_set_aside (migration 064): what the log line and the metric name. */
export interface FactSetAside {
  id: string;
  merchant_id: string;
  kind: string;
  error_code: string;
  error_message: string;
}

/**
 * SQLSTATE classes of an error that the fact itself causes, and that storing it again would raise again: 22, a data
 * exception (a value out of range); 23, an integrity constraint violation (a merchant that no longer exists, a
 * check); 54, a program limit (an index entry too large). Anything else (a lock or statement timeout, a lost
 * connection, a deadlock, the server shutting down) is the moment's, not the fact's: the drain fails and the next
 * run retries, setting nothing aside.
 */
const FACT_ERROR_CLASSES = ['22', '23', '54'];

/** Whether `err` is an error of a fact's data (FACT_ERROR_CLASSES), not of the moment. */
export function isFactError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && FACT_ERROR_CLASSES.includes(code.slice(0, 2));
}

/**
 * Moves the pending fact `id` to analytics_set_aside with the error its upsert raised, in the caller's transaction
 * (the one that counts the rest of its batch). Answers what was moved; nothing when the fact is no longer pending.
 * Only the error's code and message are kept, not its detail, which may quote another table's values.
 */
export async function setFactAside(tx: Queryable, id: string, err: unknown): Promise<FactSetAside | undefined> {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = (typeof e.message === 'string' ? e.message : String(err)).slice(0, 1000);
  const [row] = await tx<FactSetAside[]>`
    with taken as (delete from analytics_pending where id = ${id} returning *)
    insert into analytics_set_aside (id, merchant_id, kind, at, affiliate_id, landing_url, referrer_host, country,
                                     device, event_id, event_type, coupon, visit_id, currency, amount, error_code,
                                     error_message)
    select id, merchant_id, kind, at, affiliate_id, landing_url, referrer_host, country, device, event_id, event_type,
           coupon, visit_id, currency, amount, ${code}, ${message}
    from taken
    returning id::text, merchant_id, kind, error_code, error_message`;
  return row;
}

/** A fact moved back from analytics_set_aside to analytics_pending: what the operator's command prints of it. */
export interface FactRequeued {
  id: string;
  merchant_id: string;
  kind: string;
  at: Date;
  error_code: string;
}

/**
 * Moves facts set aside back to analytics_pending, for the drain to count once their cause is fixed: all of them, or
 * those of one merchant, or those with these ids (both: those of the merchant among them). One statement takes them
 * from analytics_set_aside (DELETE … RETURNING) and queues them, so a fact is in one table or the other, never both.
 * Another move of the same facts at once waits for this one's row locks, then finds them gone and moves nothing:
 * a fact is queued once however often, and however many at once, it is moved. Each keeps its id (the identity
 * never hands an id out again, and the fact left analytics_pending when it was set aside), so the drain takes it
 * first and its log line, set-aside row and pending row name it alike.
 */
export async function requeueSetAsideFacts(
  sql: Queryable,
  which: { merchantId?: string; ids?: readonly string[] },
): Promise<FactRequeued[]> {
  return sql<FactRequeued[]>`
    with taken as (
      delete from analytics_set_aside
      where true
        ${which.merchantId !== undefined ? sql`and merchant_id = ${which.merchantId}` : sql``}
        ${which.ids !== undefined ? sql`and id = any(${which.ids as string[]}::bigint[])` : sql``}
      returning *
    ), queued as (
      insert into analytics_pending (id, merchant_id, kind, at, affiliate_id, landing_url, referrer_host, country,
                                     device, event_id, event_type, coupon, visit_id, currency, amount)
      overriding system value
      select id, merchant_id, kind, at, affiliate_id, landing_url, referrer_host, country, device, event_id,
             event_type, coupon, visit_id, currency, amount
      from taken
    )
    select t.id::text as id, t.merchant_id, t.kind, t.at, t.error_code from taken t order by t.id`;
}
