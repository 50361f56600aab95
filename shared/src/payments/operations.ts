import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import * as s from './schemas.ts';

/**
 * One entry per /v1 operation: the gateway routes by it, the payments service validates with its parameter schema
 * and answers with the response schema's object, and GET /v1/openapi is generated from it. Parameters come in the
 * query string (GET) or the form-encoded body (POST); `path` names the path parameters.
 */
export interface PaymentsOperation<P extends TObject = TObject> {
  name: string;
  method: 'get' | 'post';
  path: string;
  summary: string;
  params: P;
  response: TSchema;
  /** 200 for every success, as Stripe answers (a create is 200 too). */
  description: string;
}

const op = <P extends TObject>(
  o: Omit<PaymentsOperation<P>, 'description'> & { description?: string },
): PaymentsOperation<P> => ({ description: o.summary, ...o });

export const paymentsApi = {
  createAccount: op({
    name: 'create_account',
    method: 'post',
    path: '/v1/accounts',
    summary: 'Create a connected account for a merchant',
    params: s.CreateAccountParams,
    response: s.AccountSchema,
  }),
  listAccounts: op({
    name: 'list_accounts',
    method: 'get',
    path: '/v1/accounts',
    summary: 'List connected accounts',
    params: s.ListAccountsParams,
    response: s.ListEnvelope(s.AccountSchema, 'AccountList'),
  }),
  retrieveAccount: op({
    name: 'retrieve_account',
    method: 'get',
    path: '/v1/accounts/{id}',
    summary: 'Retrieve a connected account',
    params: s.RetrieveParams,
    response: s.AccountSchema,
  }),
  createAccountLink: op({
    name: 'create_account_link',
    method: 'post',
    path: '/v1/account_links',
    summary: 'Create a single-use onboarding link (five minutes)',
    params: s.CreateAccountLinkParams,
    response: s.AccountLinkSchema,
  }),
  createPaymentIntent: op({
    name: 'create_payment_intent',
    method: 'post',
    path: '/v1/payment_intents',
    summary: 'Create a payment intent (confirm=true to pay at once)',
    params: s.CreatePaymentIntentParams,
    response: s.PaymentIntentSchema,
  }),
  listPaymentIntents: op({
    name: 'list_payment_intents',
    method: 'get',
    path: '/v1/payment_intents',
    summary: 'List payment intents',
    params: Type.Object(
      { ...s.ListParams, created: Type.Optional(s.ListAccountsParams.properties.created) },
      {
        additionalProperties: false,
      },
    ),
    response: s.ListEnvelope(s.PaymentIntentSchema, 'PaymentIntentList'),
  }),
  retrievePaymentIntent: op({
    name: 'retrieve_payment_intent',
    method: 'get',
    path: '/v1/payment_intents/{id}',
    summary: 'Retrieve a payment intent',
    params: s.RetrieveParams,
    response: s.PaymentIntentSchema,
  }),
  confirmPaymentIntent: op({
    name: 'confirm_payment_intent',
    method: 'post',
    path: '/v1/payment_intents/{id}/confirm',
    summary: 'Confirm a payment intent: the processor charges its payment method',
    params: s.ConfirmPaymentIntentParams,
    response: s.PaymentIntentSchema,
  }),
  capturePaymentIntent: op({
    name: 'capture_payment_intent',
    method: 'post',
    path: '/v1/payment_intents/{id}/capture',
    summary: 'Capture a payment intent in requires_capture',
    params: s.CapturePaymentIntentParams,
    response: s.PaymentIntentSchema,
  }),
  cancelPaymentIntent: op({
    name: 'cancel_payment_intent',
    method: 'post',
    path: '/v1/payment_intents/{id}/cancel',
    summary: 'Cancel a payment intent that has not succeeded',
    params: s.CancelPaymentIntentParams,
    response: s.PaymentIntentSchema,
  }),
  listTransactions: op({
    name: 'list_transactions',
    method: 'get',
    path: '/v1/transactions',
    summary: "List the balance's transactions (the platform's, or a Stripe-Account's)",
    params: s.ListTransactionsParams,
    response: s.ListEnvelope(s.BalanceTransactionSchema, 'BalanceTransactionList'),
  }),
  listBalanceTransactions: op({
    name: 'list_balance_transactions',
    method: 'get',
    path: '/v1/balance_transactions',
    summary: "List the balance's transactions (Stripe's path for GET /v1/transactions)",
    params: s.ListTransactionsParams,
    response: s.ListEnvelope(s.BalanceTransactionSchema, 'BalanceTransactionList'),
  }),
  retrieveBalance: op({
    name: 'retrieve_balance',
    method: 'get',
    path: '/v1/balance',
    summary: 'Available and pending balance per currency',
    params: s.RetrieveParams,
    response: s.BalanceSchema,
  }),
  createPayout: op({
    name: 'create_payout',
    method: 'post',
    path: '/v1/payouts',
    summary: 'Pay out from the available balance (balance_insufficient when it does not cover the amount)',
    params: s.CreatePayoutParams,
    response: s.PayoutSchema,
  }),
  listPayouts: op({
    name: 'list_payouts',
    method: 'get',
    path: '/v1/payouts',
    summary: 'List payouts of the platform, or of one connected account with Stripe-Account',
    params: s.ListPayoutsParams,
    response: s.ListEnvelope(s.PayoutSchema, 'PayoutList'),
  }),
  retrievePayout: op({
    name: 'retrieve_payout',
    method: 'get',
    path: '/v1/payouts/{id}',
    summary: 'Retrieve a payout',
    params: s.RetrieveParams,
    response: s.PayoutSchema,
  }),
};

export const paymentsOperations: PaymentsOperation[] = Object.values(paymentsApi);
