import type { NatsConnection } from '@nats-io/transport-node';
import type { Registry } from 'prom-client';
import { rpcSubject } from '@platform/shared/catalogue';
import type { Logger } from '@platform/shared/log';
import type { Operation } from '@platform/shared/operation';
import type { PaymentsOperation } from '@platform/shared/payments/operations';
import type { PaymentsRpcRequest } from '@platform/shared/payments/rpc';
import { serveRequests, type RequestBase, type Route } from '@platform/shared/request-server';
import type { Worker } from '@platform/shared/service';
import { paymentsContext, type PaymentsContext } from './context.ts';
import type { PaymentsDeps } from './deps.ts';
import { stripeErrors } from './stripe-errors.ts';

/** A /v1 operation of the payments service (defineOperation with the Stripe refusals). */
export type PaymentsApiOperation = Operation<PaymentsContext, PaymentsOperation>;

/** A subject the payments service answers besides the /v1 operations: an onboarding page's, the commissions service's. */
export type PaymentsRoute<R extends RequestBase> = Omit<Route<R>, 'subject' | 'queue'>;

/**
 * Answers {prefix}.rpc.payments.{name} through the request server (request-server.ts), in queue group "payments" (one
 * replica answers each), with the /v1 surface's Stripe errors: a StripeError becomes its status and error object, a
 * database outage 503 `api_error`, anything else 500 without detail.
 */
export function servePayments(opts: {
  nc: NatsConnection;
  prefix: string;
  deps: PaymentsDeps;
  operations: PaymentsApiOperation[];
  routes: PaymentsRoute<never>[];
  log: Logger;
  registry: Registry;
}): Worker {
  const { deps } = opts;
  const at = (name: string) => ({ subject: rpcSubject(opts.prefix, 'payments', name), queue: 'payments' });
  const operations = opts.operations.map((op): Route<PaymentsRpcRequest> => ({
    ...at(op.spec.name),
    name: op.spec.name,
    run: (request, log) => op.run(() => paymentsContext(deps, request, log), request),
  }));
  return serveRequests({
    nc: opts.nc,
    routes: [...operations, ...opts.routes.map((route) => ({ ...route, ...at(route.name) }))],
    log: opts.log,
    registry: opts.registry,
    metrics: {
      label: 'operation',
      total: {
        name: 'payment_operations_total',
        help: 'Payment API operations and onboarding requests handled, by operation and result code',
      },
      duration: { name: 'payment_operation_duration_seconds', help: 'Time to handle a payment API operation' },
    },
    errors: stripeErrors,
    idempotency: { sql: deps.sql, encryptionKey: deps.encryptionKey },
  });
}
