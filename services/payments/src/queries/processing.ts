import type { Queryable, Sql } from '@platform/shared/db';
import type { PaymentIntentRow, PaymentIntentStatus } from './payment-intents.ts';

/** What is asked of the processor for an intent in `processing`, kept so that the same call can be made again. */
export interface ProcessingRequest {
  paymentMethod: string;
  amount: number;
  currency: string;
  /** confirm: the customer completed the 3D Secure asked for earlier. */
  actionCompleted?: boolean;
}

/** An intent committed as `processing`: the processor call in flight, its request and its attempt number. */
export type ProcessingIntent = PaymentIntentRow & {
  processor_attempts: number;
  processing_operation: 'confirm' | 'capture';
  processing_request: ProcessingRequest;
};

/**
 * Marks a locked intent `processing` before the processor is called (the caller commits at once): a new attempt, with
 * what it asks, so that the idempotency key (intent, operation, attempt) and the request can be replayed after a crash.
 */
export async function beginProcessing(
  sql: Queryable,
  intent: Pick<PaymentIntentRow, 'id' | 'livemode'>,
  operation: 'confirm' | 'capture',
  request: ProcessingRequest,
  metadata?: Record<string, string>,
): Promise<ProcessingIntent> {
  const [row] = await sql<ProcessingIntent[]>`
    update payment_intents set status = 'processing', processor_attempts = processor_attempts + 1,
      processing_operation = ${operation}, processing_request = ${sql.json(request as never)},
      processing_since = now(), metadata = ${metadata ? sql.json(metadata) : sql`metadata`}
    where id = ${intent.id} and livemode = ${intent.livemode}
    returning *`;
  return row!;
}

/** The outcome of a processor call, as it changes the intent. */
export interface ProcessedChange {
  status: PaymentIntentStatus;
  payment_method?: string | null;
  last_payment_error?: PaymentIntentRow['last_payment_error'];
  amount_received?: number;
}

/**
 * Writes the outcome of the intent's attempt and ends `processing`, only if that attempt is still the one in flight:
 * of the request that called the processor and the reconciler that asked again, exactly one writes (undefined: the
 * other one did).
 */
export async function finishProcessing(
  sql: Queryable,
  intent: Pick<ProcessingIntent, 'id' | 'livemode' | 'processor_attempts'>,
  change: ProcessedChange,
): Promise<PaymentIntentRow | undefined> {
  const error = change.last_payment_error;
  const [row] = await sql<PaymentIntentRow[]>`
    update payment_intents set
      status = ${change.status},
      payment_method = ${change.payment_method === undefined ? sql`payment_method` : change.payment_method},
      last_payment_error = ${error === undefined ? sql`last_payment_error` : error === null ? null : sql.json(error)},
      amount_received = coalesce(${change.amount_received ?? null}, amount_received),
      processing_operation = null, processing_request = null, processing_since = null
    where id = ${intent.id} and livemode = ${intent.livemode} and status = 'processing'
      and processor_attempts = ${intent.processor_attempts}
    returning *`;
  return row;
}

/**
 * Intents left in `processing` for longer than `afterMs` (their request stopped between the processor call and the
 * write of its outcome), leased to this caller: their clock restarts, so that another replica's pass leaves them to
 * this one while it asks the processor. SKIP LOCKED: replicas never wait on each other.
 */
export function claimStuckIntents(sql: Sql, afterMs: number, limit: number) {
  return sql<ProcessingIntent[]>`
    update payment_intents set processing_since = now()
    where id in (
      select id from payment_intents
      where status = 'processing' and processing_since < now() - ${afterMs} * interval '1 millisecond'
      order by processing_since limit ${limit}
      for update skip locked)
    returning *`;
}
