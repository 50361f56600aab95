import { randomBytes } from 'node:crypto';
import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { invalidRequest, resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import { checkPaymentMethod, confirmed, settle } from '../charge.ts';
import type { PaymentsDeps } from '../deps.ts';
import { listPage } from '../list.ts';
import { definePaymentsOperation } from '../operation.ts';
import { presentPaymentIntent } from '../present.ts';
import { accountExists } from '../queries/accounts.ts';
import {
  findPaymentIntent,
  insertPaymentIntent,
  listPaymentIntents,
  paymentIntentCreatedAt,
  updatePaymentIntent,
  type PaymentIntentRow,
  type PaymentIntentStatus,
} from '../queries/payment-intents.ts';
import { beginProcessing } from '../queries/processing.ts';
import { checkCurrency, cleanMetadata } from './params.ts';

const CONFIRMABLE: PaymentIntentStatus[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];
const CANCELABLE: PaymentIntentStatus[] = [
  'requires_payment_method',
  'requires_capture',
  'requires_confirmation',
  'requires_action',
];

const DONE: Record<'confirm' | 'capture' | 'cancel', string> = {
  confirm: 'confirmed',
  capture: 'captured',
  cancel: 'canceled',
};

const unexpectedState = (intent: PaymentIntentRow, action: keyof typeof DONE, allowed: PaymentIntentStatus[]) =>
  invalidRequest(
    `You cannot ${action} this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be ${DONE[action]}: ${allowed.join(', ')}.`,
    { code: 'payment_intent_unexpected_state' },
  );

const missingPaymentMethod = () =>
  invalidRequest(
    "You cannot confirm this PaymentIntent because it's missing a payment method. Update it with a payment_method, or confirm it with one.",
    { code: 'payment_intent_unexpected_state', param: 'payment_method' },
  );

export const createPaymentIntentOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.createPaymentIntent, async (ctx, params) => {
    const currency = checkCurrency(params.currency);
    const destination = params.transfer_data?.destination ?? null;
    if (destination !== null && !(await accountExists(ctx.sql, ctx.livemode, destination)))
      throw invalidRequest(`No such destination: '${destination}'`, {
        code: 'resource_missing',
        param: 'transfer_data[destination]',
      });
    if (params.confirm && !params.payment_method) throw missingPaymentMethod();
    const id = newId('pi');
    const intent = {
      id,
      livemode: ctx.livemode,
      account_id: ctx.account,
      amount: String(params.amount),
      currency,
      status: params.payment_method ? ('requires_confirmation' as const) : ('requires_payment_method' as const),
      payment_method: params.payment_method ?? null,
      capture_method: params.capture_method ?? 'automatic_async',
      transfer_destination: destination,
      description: params.description ?? null,
      metadata: cleanMetadata(params.metadata),
      client_secret: `${id}_secret_${randomBytes(18).toString('base64url')}`,
    };
    if (params.payment_method) await checkPaymentMethod(ctx.deps, ctx.livemode, params.payment_method);
    // Confirmed at once: committed as processing before the processor is called (settle), so that a crash between
    // the call and the write of its outcome leaves a row the reconciler finishes.
    const insert = (tx: Queryable) =>
      insertPaymentIntent(tx, { ...intent, amount: params.amount, last_payment_error: null, amount_received: 0 });
    if (!params.confirm) return presentPaymentIntent(await insert(ctx.sql));
    const processing = await ctx.sql.begin(async (tx) =>
      beginProcessing(tx, await insert(tx), 'confirm', {
        paymentMethod: params.payment_method!,
        amount: params.amount,
        currency,
        actionCompleted: false,
      }),
    );
    const settled = await settle(ctx.deps, processing, ctx.log);
    return confirmed(settled.row, settled.decision);
  });

export const retrievePaymentIntentOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.retrievePaymentIntent, async (ctx, _params, id) => {
    const row = await findPaymentIntent(ctx.sql, ctx.livemode, ctx.account, id);
    if (!row) throw resourceMissing('payment_intent', id, 'intent');
    return presentPaymentIntent(row);
  });

export const listPaymentIntentsOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.listPaymentIntents, (ctx, params) =>
    listPage({
      params,
      url: '/v1/payment_intents',
      locate: (id) => paymentIntentCreatedAt(ctx.sql, ctx.livemode, ctx.account, id),
      fetch: (position, limit) => listPaymentIntents(ctx.sql, ctx.livemode, ctx.account, params, position, limit),
      present: presentPaymentIntent,
    }),
  );

export const confirmPaymentIntentOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.confirmPaymentIntent, async (ctx, params, id) => {
    const seen = await findPaymentIntent(ctx.sql, ctx.livemode, ctx.account, id);
    if (!seen) throw resourceMissing('payment_intent', id, 'intent');
    const named = params.payment_method ?? seen.payment_method;
    if (named) await checkPaymentMethod(ctx.deps, ctx.livemode, named);
    // The lock is held only to move the intent to processing; the processor is called after the commit.
    const begun = await ctx.sql.begin(async (tx) => {
      const intent = (await findPaymentIntent(tx, ctx.livemode, ctx.account, id, true))!;
      // Money may be moving (a confirmation whose answer was lost, retried with its key): the intent is answered as it
      // stands, never a 400 that a retry would replay while the charge goes through; its finisher or the reconciler
      // completes it.
      if (intent.status === 'processing') return { standing: intent };
      if (!CONFIRMABLE.includes(intent.status)) throw unexpectedState(intent, 'confirm', CONFIRMABLE);
      const paymentMethod = params.payment_method ?? intent.payment_method;
      if (!paymentMethod) throw missingPaymentMethod();
      // Another request changed the intent since it was read: the processor is never asked under the lock.
      if (paymentMethod !== named)
        throw invalidRequest(
          'This object cannot be accessed right now because another API request is currently accessing it. Retry the request.',
          { code: 'lock_timeout', status: 409 },
        );
      const processing = await beginProcessing(tx, intent, 'confirm', {
        paymentMethod,
        amount: Number(intent.amount),
        currency: intent.currency,
        actionCompleted: intent.status === 'requires_action' && intent.payment_method === paymentMethod,
      });
      return { processing };
    });
    if (begun.standing) return presentPaymentIntent(begun.standing);
    const settled = await settle(ctx.deps, begun.processing, ctx.log);
    return confirmed(settled.row, settled.decision);
  });

export const capturePaymentIntentOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.capturePaymentIntent, async (ctx, params, id) => {
    const processing = await ctx.sql.begin(async (tx) => {
      const intent = await findPaymentIntent(tx, ctx.livemode, ctx.account, id, true);
      if (!intent) throw resourceMissing('payment_intent', id, 'intent');
      if (intent.status !== 'requires_capture') throw unexpectedState(intent, 'capture', ['requires_capture']);
      const amount = params.amount_to_capture ?? Number(intent.amount);
      if (amount > Number(intent.amount))
        throw invalidRequest(
          `The amount to capture (${amount}) is greater than the amount capturable (${intent.amount}).`,
          { code: 'amount_too_large', param: 'amount_to_capture' },
        );
      const metadata = params.metadata ? cleanMetadata({ ...intent.metadata, ...params.metadata }) : undefined;
      const request = { paymentMethod: intent.payment_method!, amount, currency: intent.currency };
      return beginProcessing(tx, intent, 'capture', request, metadata);
    });
    const settled = await settle(ctx.deps, processing, ctx.log);
    return presentPaymentIntent(settled.row);
  });

export const cancelPaymentIntentOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.cancelPaymentIntent, async (ctx, params, id) => {
    const row = await ctx.sql.begin(async (tx) => {
      const intent = await findPaymentIntent(tx, ctx.livemode, ctx.account, id, true);
      if (!intent) throw resourceMissing('payment_intent', id, 'intent');
      if (!CANCELABLE.includes(intent.status)) throw unexpectedState(intent, 'cancel', CANCELABLE);
      return updatePaymentIntent(tx, id, {
        status: 'canceled',
        cancellation_reason: params.cancellation_reason ?? 'requested_by_customer',
        canceled: true,
      });
    });
    return presentPaymentIntent(row);
  });
