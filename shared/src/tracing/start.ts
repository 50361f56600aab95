import { markTracingEnabled } from './context.ts';
import { tracesEndpoint, type TracingConfig } from './env.ts';
// Only the type, which is erased: the SDK itself is loaded by the dynamic import below, when tracing is on.
import type { Tracing } from './sdk.ts';

/**
 * Starts OpenTelemetry tracing for a service's process, from its entry point, when an OTLP endpoint is configured;
 * null, with nothing loaded, when none is. The SDK is imported here and only here, on demand: every other module
 * depends on the API alone, which without an SDK hands out non-recording spans.
 */
export async function startTracing(service: string, config: Partial<TracingConfig>): Promise<Tracing | null> {
  if (tracesEndpoint(config) === null) return null;
  const { startSdk } = await import('./sdk.ts');
  const sdk = startSdk(service, config);
  markTracingEnabled();
  return sdk;
}

/**
 * runMain's start function for a service: tracing first (so that everything the service does is traced), then the
 * service; closing the service then flushes the spans it left.
 */
export function withTracing<C extends Partial<TracingConfig>>(
  service: string,
  loadConfig: () => C,
  start: (config: C) => Promise<{ close(): Promise<void> }>,
): () => Promise<{ close(): Promise<void> }> {
  return async () => {
    const config = loadConfig();
    const tracing = await startTracing(service, config);
    const running = await start(config);
    return {
      async close() {
        await running.close();
        await tracing?.shutdown();
      },
    };
  };
}
