import type { Queryable, Sql } from '@platform/shared/db';
import type { RowPosition } from '@platform/shared/cursor';
import { createdRange, keyset, type ListParams } from './keyset.ts';

export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

export interface PaymentIntentRow {
  id: string;
  livemode: boolean;
  account_id: string | null;
  amount: string;
  amount_received: string;
  currency: string;
  status: PaymentIntentStatus;
  payment_method: string | null;
  capture_method: 'automatic' | 'automatic_async' | 'manual';
  transfer_destination: string | null;
  description: string | null;
  metadata: Record<string, string>;
  last_payment_error: {
    type: string;
    code: string;
    decline_code?: string;
    message: string;
    payment_method: { id: string; object: 'payment_method' };
  } | null;
  cancellation_reason: string | null;
  canceled_at: Date | null;
  client_secret: string;
  created_at: Date;
}

export async function insertPaymentIntent(
  sql: Queryable,
  p: Omit<PaymentIntentRow, 'amount' | 'amount_received' | 'cancellation_reason' | 'canceled_at' | 'created_at'> & {
    amount: number;
    amount_received: number;
  },
): Promise<PaymentIntentRow> {
  const [row] = await sql<PaymentIntentRow[]>`
    insert into payment_intents (id, livemode, account_id, amount, amount_received, currency, status, payment_method,
      capture_method, transfer_destination, description, metadata, last_payment_error, client_secret)
    values (${p.id}, ${p.livemode}, ${p.account_id}, ${p.amount}, ${p.amount_received}, ${p.currency}, ${p.status},
      ${p.payment_method}, ${p.capture_method}, ${p.transfer_destination}, ${p.description}, ${sql.json(p.metadata)},
      ${p.last_payment_error === null ? null : sql.json(p.last_payment_error)}, ${p.client_secret})
    returning *`;
  return row!;
}

/** The intent as this caller may see it (its mode, and its Stripe-Account or the platform), locked when asked. */
export async function findPaymentIntent(
  sql: Queryable,
  livemode: boolean,
  account: string | null,
  id: string,
  lock = false,
): Promise<PaymentIntentRow | undefined> {
  const [row] = await sql<PaymentIntentRow[]>`
    select * from payment_intents
    where id = ${id} and livemode = ${livemode} and account_id is not distinct from ${account}
    ${lock ? sql`for update` : sql``}`;
  return row;
}

export async function updatePaymentIntent(
  sql: Queryable,
  id: string,
  change: Partial<
    Pick<PaymentIntentRow, 'status' | 'payment_method' | 'last_payment_error' | 'cancellation_reason' | 'metadata'>
  > & {
    amount_received?: number;
    canceled?: boolean;
  },
): Promise<PaymentIntentRow> {
  const [row] = await sql<PaymentIntentRow[]>`
    update payment_intents set
      status = coalesce(${change.status ?? null}, status),
      payment_method = ${change.payment_method === undefined ? sql`payment_method` : change.payment_method},
      last_payment_error = ${change.last_payment_error === undefined ? sql`last_payment_error` : change.last_payment_error === null ? null : sql.json(change.last_payment_error)},
      cancellation_reason = coalesce(${change.cancellation_reason ?? null}, cancellation_reason),
      metadata = ${change.metadata ? sql.json(change.metadata) : sql`metadata`},
      amount_received = coalesce(${change.amount_received ?? null}, amount_received),
      canceled_at = ${change.canceled ? sql`date_trunc('milliseconds', now())` : sql`canceled_at`}
    where id = ${id}
    returning *`;
  return row!;
}

export async function paymentIntentCreatedAt(sql: Sql, livemode: boolean, account: string | null, id: string) {
  return (await findPaymentIntent(sql, livemode, account, id))?.created_at ?? null;
}

export function listPaymentIntents(
  sql: Sql,
  livemode: boolean,
  account: string | null,
  params: ListParams,
  position: RowPosition,
  limit: number,
) {
  const page = keyset(sql, position);
  return sql<PaymentIntentRow[]>`
    select * from payment_intents
    where livemode = ${livemode} and account_id is not distinct from ${account}
      ${createdRange(sql, params.created)} ${page.where}
    ${page.order} limit ${limit}`;
}
