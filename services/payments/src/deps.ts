import type { Sql } from '@platform/shared/db';
import type { PaymentProcessor } from './processor.ts';

/** What the payments operations need from configuration and the process. */
export interface PaymentsDeps {
  sql: Sql;
  publicBaseUrl: string;
  /** Encrypts bank account details at rest. */
  encryptionKey: Buffer;
  /** Charges payment methods; the sandbox (test mode only: it has no live payment methods) until a real one is configured. */
  processor: PaymentProcessor;
  availabilityDelaySeconds: number;
  payoutRailStepMs: number;
  accountLinkTtlSeconds: number;
}
