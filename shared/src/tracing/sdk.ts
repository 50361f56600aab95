import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { hostDetector, osDetector, processDetector, serviceInstanceIdDetector } from '@opentelemetry/resources';
import { startNodeSdk } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import pkg from '../../../package.json' with { type: 'json' };
import type { TracingConfig } from './env.ts';

/** A running tracing SDK: `shutdown` exports the spans still buffered. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK, loaded only by start.ts when tracing is on. The OTLP exporter (http/protobuf or http/json)
 * reads its endpoint, protocol, headers and batching from the OTEL_* variables as the specification says; the
 * sampler and the resource come from the checked configuration; only traces are exported (no metrics or logs: the
 * services' metrics are Prometheus's). Propagation is W3C Trace Context, which the NATS hops carry.
 */
export function startSdk(service: string, config: Partial<TracingConfig>): Tracing {
  // The batch processor reads its delay from the environment; the checked value is the one it reads.
  if (config.OTEL_BSP_SCHEDULE_DELAY !== undefined)
    process.env['OTEL_BSP_SCHEDULE_DELAY'] = String(config.OTEL_BSP_SCHEDULE_DELAY);
  return startNodeSdk({
    logLevel: 'warn',
    sampler: samplerOf(config),
    propagators: [new W3CTraceContextPropagator()],
    // Where the span comes from (host, process, instance); service.name is the service's own, not OTEL_SERVICE_NAME.
    resourceDetectors: [hostDetector, osDetector, processDetector, serviceInstanceIdDetector],
    resourceAttributes: {
      ...resourceAttributesOf(config.OTEL_RESOURCE_ATTRIBUTES),
      [ATTR_SERVICE_NAME]: service,
      [ATTR_SERVICE_VERSION]: (pkg as { version?: string }).version ?? '0.0.0',
    },
    metricReaders: [],
    logRecordProcessors: [],
  });
}

function samplerOf(config: Partial<TracingConfig>): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG ?? 1);
  switch (config.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** OTEL_RESOURCE_ATTRIBUTES as attributes (values percent-decoded, as the specification says). */
function resourceAttributesOf(value: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of value ? value.split(',') : []) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    try {
      attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      attributes[key] = pair.slice(at + 1).trim();
    }
  }
  return attributes;
}
