import { randomBytes } from 'node:crypto';
import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { invalidRequest } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import { checkPaymentMethod, settle } from '../charge.ts';
import { confirmed } from '../domain/charge.ts';
import type { PaymentsContext } from '../context.ts';
import { missingPaymentMethod } from '../domain/intent-states.ts';
import { presentPaymentIntent } from '../present.ts';
import { accountExists } from '../queries/accounts.ts';
import { insertPaymentIntent } from '../queries/payment-intents.ts';
import { beginProcessing } from '../queries/processing.ts';
import { stripeRefusals } from '../stripe-errors.ts';
import { checkCurrency, cleanMetadata } from './params.ts';

export const createPaymentIntentOperation = defineOperation(
  paymentsApi.createPaymentIntent,
  async (ctx: PaymentsContext, { params }) => {
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
    if (!params.confirm) return { outcome: 'ok', body: presentPaymentIntent(await insert(ctx.sql)) };
    const processing = await ctx.sql.begin(async (tx) =>
      beginProcessing(tx, await insert(tx), 'confirm', {
        paymentMethod: params.payment_method!,
        amount: params.amount,
        currency,
        actionCompleted: false,
      }),
    );
    const settled = await settle(ctx.deps, processing, ctx.log);
    return { outcome: 'ok', body: confirmed(settled.row, settled.decision) };
  },
  stripeRefusals,
);
