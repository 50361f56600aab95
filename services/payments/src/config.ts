import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, TopologyEnv, loadConfig, PUBLIC_BASE_URL } from '@platform/shared/config';

export const PaymentsEnv = Type.Object({
  ...CommonEnv,
  ...TopologyEnv,
  OPS_PORT: Type.Integer({ default: 9105, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  PUBLIC_BASE_URL,
  PAYMENTS_AVAILABILITY_DELAY_S: Type.Integer({
    default: 172_800,
    minimum: 0,
    maximum: 2_592_000,
    description:
      'seconds from a payment to its funds becoming available in the receiving balance (pm_card_bypassPending: at once)',
  }),
  PAYOUT_RAIL_STEP_MS: Type.Integer({
    default: 30_000,
    minimum: 10,
    maximum: 604_800_000,
    description:
      'the sandbox payout rail moves a payout pending → in_transit, then in_transit → paid or failed, after this long each',
  }),
  PAYMENTS_CLOCK_INTERVAL_MS: Type.Integer({
    default: 1000,
    minimum: 10,
    maximum: 60_000,
    description: 'how often pending funds that came due are made available and the payout rail moves payouts',
  }),
  PAYMENT_PROCESSING_RECOVER_AFTER_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    maximum: 3_600_000,
    description:
      'a payment intent left processing this long (its request stopped between the processor call and the write of its outcome) is finished by the reconciler, asking the processor again with the same idempotency key',
  }),
  LEDGER_RECONCILE_INTERVAL_MS: Type.Integer({
    default: 300_000,
    minimum: 100,
    maximum: 86_400_000,
    description: 'how often every balance is compared with the sum of its ledger entries',
  }),
  ACCOUNT_LINK_TTL_S: Type.Integer({
    default: 300,
    minimum: 1,
    maximum: 3600,
    description: 'how long an account link may be opened after it was created (five minutes, as Stripe)',
  }),
});
export type PaymentsConfig = Static<typeof PaymentsEnv>;

export const loadPaymentsConfig = (env: NodeJS.ProcessEnv = process.env): PaymentsConfig =>
  loadConfig(PaymentsEnv, env);
