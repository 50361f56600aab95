import type { DomainEventType } from '@platform/shared/catalogue';
import { encryptionKey } from '@platform/shared/config';
import type { ServiceRuntime } from '@platform/shared/service';
import { createEndpoint } from '@platform/dispatcher/endpoints';
import { loadDispatcherConfig } from '@platform/dispatcher/config';
import { addressPolicyOf, startDispatcherService } from '@platform/dispatcher/service';
import { captureLogger, startPlatform, type Platform, type TestLike } from './platform.ts';

/**
 * Dispatcher settings for tests: the backoff table shrunk a thousandfold (5 s → 5 ms), a fast sweeper, short
 * timeouts, and loopback receivers allowed (http, 127.0.0.0/8). The SSRF tests turn the allowance off.
 */
export const TEST_DISPATCHER_ENV: Record<string, string> = {
  WEBHOOK_BACKOFF_SCALE: '0.001',
  // The tests of the per-endpoint limit count to 4 (the default is 16).
  WEBHOOK_ENDPOINT_CONCURRENCY: '4',
  WEBHOOK_SWEEP_INTERVAL_MS: '100',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  WEBHOOK_ATTEMPT_TIMEOUT_MS: '3000',
  WEBHOOK_CONNECT_TIMEOUT_MS: '1000',
  WEBHOOK_REQUEUE_AFTER_MS: '2000',
  WEBHOOK_RECONCILE_AFTER_MS: '2000',
};

export interface WebhookPlatform {
  platform: Platform;
  dispatcher: ServiceRuntime;
  dispatcherLogs: string[];
  env: Record<string, string>;
}

/** The platform (gateway + affiliates) with a dispatcher in this process, stopped first at teardown. */
export async function startWebhookPlatform(t: TestLike, env: Record<string, string> = {}): Promise<WebhookPlatform> {
  const platform = await startPlatform(t);
  const dispatcherEnv = { ...platform.env, ...TEST_DISPATCHER_ENV, ...env };
  const { log, lines } = captureLogger('dispatcher');
  const dispatcher = await startDispatcherService(loadDispatcherConfig(dispatcherEnv), log);
  t.teardown(() => dispatcher.close());
  return { platform, dispatcher, dispatcherLogs: lines, env: dispatcherEnv };
}

/** Another dispatcher (replica, or one with other settings) on an existing platform. */
export async function startDispatcher(t: TestLike, platform: Platform, env: Record<string, string> = {}) {
  const { log, lines } = captureLogger('dispatcher');
  const dispatcher = await startDispatcherService(
    loadDispatcherConfig({ ...platform.env, ...TEST_DISPATCHER_ENV, ...env }),
    log,
  );
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await dispatcher.close();
  };
  t.teardown(close);
  return { dispatcher, logs: lines, close };
}

/** A delivery as the log shows it (the fields tests look at). */
export interface LoggedDelivery {
  id: string;
  message_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  dead_letter_reason: string | null;
  next_attempt_at: string | null;
  created_at: string;
  attempts: {
    attempted_at: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    response_body: string;
  }[];
}

/**
 * Registers an endpoint straight through the dispatcher's endpoint module (same URL guard and secret encryption as
 * the API), for tests that need one while no dispatcher is running.
 */
export async function registerEndpoint(
  platform: Platform,
  merchantId: string,
  body: { url: string; event_types?: DomainEventType[] },
) {
  const config = loadDispatcherConfig({ ...platform.env, ...TEST_DISPATCHER_ENV });
  return createEndpoint(
    platform.sql,
    { masterKey: encryptionKey(config), policy: addressPolicyOf(config) },
    merchantId,
    body,
  );
}
