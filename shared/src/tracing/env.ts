import { Type, type Static, type TObject } from '@sinclair/typebox';

const OtlpProtocol = Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')]);
const OtlpUrl = Type.String({ pattern: '^https?://[^\\s]+$' });

/**
 * The standard OpenTelemetry variables every service reads (https://opentelemetry.io/docs/specs/otel/configuration/
 * sdk-environment-variables/), checked at start like every other setting. Tracing starts only when an endpoint is
 * set; the SDK's OTLP exporter then reads the endpoint, protocol, headers and batch settings as the specification
 * says, and the services build the sampler and resource from these values.
 */
export const TracingEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional({
    ...OtlpUrl,
    description:
      'OTLP/HTTP base URL of a collector (traces go to <url>/v1/traces); tracing is off unless this or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional({
    ...OtlpUrl,
    description: 'OTLP/HTTP URL that traces are posted to, as is (overrides OTEL_EXPORTER_OTLP_ENDPOINT for traces)',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Optional({ ...OtlpProtocol, description: 'http/protobuf (default) or http/json' }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional({
    ...OtlpProtocol,
    description: 'the protocol for traces (overrides OTEL_EXPORTER_OTLP_PROTOCOL)',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(
    Type.String({
      pattern: '^[^=,\\s]+=[^,]*(,\\s*[^=,\\s]+=[^,]*)*$',
      description: 'headers of every export request, key=value,… (an authorization token for a hosted backend)',
    }),
  ),
  OTEL_TRACES_SAMPLER: Type.Union(
    [
      Type.Literal('always_on'),
      Type.Literal('always_off'),
      Type.Literal('traceidratio'),
      Type.Literal('parentbased_always_on'),
      Type.Literal('parentbased_always_off'),
      Type.Literal('parentbased_traceidratio'),
    ],
    {
      default: 'parentbased_always_on',
      description:
        'which traces are recorded: parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG keeps a ratio of them',
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: Type.Number({
    default: 1,
    minimum: 0,
    maximum: 1,
    description: 'the ratio of traces recorded by the traceidratio samplers (0–1)',
  }),
  OTEL_RESOURCE_ATTRIBUTES: Type.Optional(
    Type.String({
      pattern: '^[^=,\\s]+=[^,]*(,\\s*[^=,\\s]+=[^,]*)*$',
      description:
        "key=value,… added to every span's resource (deployment.environment.name=prod, say); service.name and service.version are the service's own",
    }),
  ),
  OTEL_BSP_SCHEDULE_DELAY: Type.Integer({
    default: 5000,
    minimum: 0,
    maximum: 60_000,
    description: 'ms between two exports of finished spans',
  }),
};

export type TracingConfig = Static<TObject<typeof TracingEnv>>;

/** The URL traces are exported to, or null when tracing is off. */
export const tracesEndpoint = (config: Partial<TracingConfig>): string | null =>
  config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_ENDPOINT ?? null;
