import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import type { PaymentsDeps } from './deps.ts';
import { balanceMismatches } from './queries/ledger-audit.ts';

/**
 * Compares every balance with the sum of its ledger entries, every `intervalMs` (and once at start), and reports
 * each difference: an error log line per balance and the gauge payments_ledger_balance_mismatches, which the alert
 * PaymentsLedgerBalanceMismatch watches. The ledger's rows cannot change (migration 028), so a difference means a
 * balance was written outside the ledger's code (a hand-made UPDATE, a defect) and money is misstated. Each replica
 * checks on its own (read only); the alert takes the largest figure.
 */
export function startLedgerReconciler(deps: PaymentsDeps, log: Logger, registry: Registry, intervalMs: number): Worker {
  const mismatches = new Gauge({
    name: 'payments_ledger_balance_mismatches',
    help: 'Balances that differ from the sum of their ledger entries, at the last reconciliation pass',
    registers: [registry],
  });
  const passes = new Counter({
    name: 'payments_ledger_reconcile_passes_total',
    help: 'Ledger reconciliation passes, by outcome (ok: every balance matches its entries)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['ok', 'mismatch', 'failed']) passes.inc({ outcome }, 0);
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const pass = async () => {
    if (stopped) return;
    try {
      const found = await balanceMismatches(deps.sql);
      mismatches.set(found.length);
      passes.inc({ outcome: found.length ? 'mismatch' : 'ok' });
      for (const m of found) log.error('ledger balance differs from its entries', { ...m });
    } catch (err) {
      passes.inc({ outcome: 'failed' });
      log.warn('ledger reconciliation pass failed; the next pass retries', { err });
    }
  };
  running = pass();
  const timer = setInterval(() => {
    running = running.then(pass);
  }, intervalMs);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
