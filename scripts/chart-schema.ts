import { writeFileSync } from 'node:fs';
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { CommonEnv } from '@platform/shared/config';
import { GatewayEnv } from '@platform/gateway/config';
import { SmtpUrl } from '@platform/dispatcher/config';
import { PLATFORM_SERVICES, type PlatformService } from './services.ts';

/**
 * The Helm chart's values.schema.json, made from the services' own configuration schemas so that an environment
 * variable the chart passes is one its service reads, with the type and range the service checks at start: a typo
 * or a wrong value fails `helm install`, not a pod. `npm run chart:schema` writes it; a test checks that the
 * committed file is this one. The services are those of scripts/services.ts, each with its own schema.
 */
/** Variables the chart sets itself: from the Secret, from the NATS values, from the ports. */
export const CHART_MANAGED_ENV = [
  'DATABASE_URL',
  'ENCRYPTION_KEY',
  'ENCRYPTION_KEYS_PREVIOUS',
  'NATS_URL',
  'NATS_USER',
  'NATS_PASSWORD',
  'NATS_TLS_CA',
  'NATS_TLS_CERT',
  'NATS_TLS_KEY',
  'OPS_PORT',
  'PORT',
  'SMTP_URL',
];

const without = (props: TProperties, names: string[]): TProperties =>
  Object.fromEntries(Object.entries(props).filter(([name]) => !names.includes(name)));
const closed = <P extends TProperties>(props: P, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const map = (value: TSchema, description: string) => Type.Record(Type.String(), value, { description });
const Quantity = Type.Union([Type.String({ pattern: '^[0-9.]+[a-zA-Z]*$' }), Type.Number({ minimum: 0 })]);
const Resources = closed({
  requests: Type.Optional(map(Quantity, 'cpu and memory requested')),
  limits: Type.Optional(map(Quantity, 'cpu and memory limits')),
});
const Replicas = Type.Integer({ minimum: 1, maximum: 1000 });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });

function serviceSchema({ name, env }: PlatformService) {
  const own = without(env.properties, [...Object.keys(CommonEnv), ...CHART_MANAGED_ENV]);
  return closed(
    {
      replicas: Replicas,
      opsPort: Port,
      nodeArgs: Type.Array(Type.String({ pattern: '^--' }), { description: 'Node flags before the entry point' }),
      resources: Resources,
      autoscaling: closed({
        enabled: Type.Boolean(),
        minReplicas: Replicas,
        maxReplicas: Replicas,
        targetCPUUtilizationPercentage: Type.Integer({ minimum: 1, maximum: 100 }),
      }),
      podDisruptionBudget: closed({
        enabled: Type.Boolean(),
        maxUnavailable: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+%$' })]),
      }),
      env: Type.Optional(
        closed(
          Object.fromEntries(Object.entries(own).map(([key, schema]) => [key, Type.Optional(schema)])),
          `variables of the ${name} service`,
        ),
      ),
    },
    `the ${name} service`,
  );
}

function chartValuesSchema(): TObject {
  const commonEnv = without(CommonEnv, CHART_MANAGED_ENV);
  return closed({
    image: closed({
      repository: Type.String({ minLength: 1 }),
      tag: Type.String(),
      pullPolicy: Type.Union([Type.Literal('Always'), Type.Literal('IfNotPresent'), Type.Literal('Never')]),
    }),
    imagePullSecrets: Type.Array(closed({ name: Type.String({ minLength: 1 }) })),
    nameOverride: Type.String(),
    fullnameOverride: Type.String(),
    commonEnv: closed(
      Object.fromEntries(Object.entries(commonEnv).map(([key, schema]) => [key, Type.Optional(schema)])),
    ),
    secrets: Type.Object(
      {
        existingSecret: Type.String(),
        databaseUrl: Type.String(),
        // Empty, or what the services accept in ENCRYPTION_KEY and ENCRYPTION_KEYS_PREVIOUS.
        encryptionKey: Type.Union([Type.Literal(''), CommonEnv.ENCRYPTION_KEY]),
        encryptionKeysPrevious: Type.Union([Type.Literal(''), CommonEnv.ENCRYPTION_KEYS_PREVIOUS]),
        // Empty, or what the dispatcher accepts in SMTP_URL (it holds the SMTP password: a Secret's, not an env value).
        smtpUrl: Type.Union([Type.Literal(''), SmtpUrl]),
      },
      {
        additionalProperties: false,
        description: 'without existingSecret, databaseUrl is required',
        if: { properties: { existingSecret: { const: '' } } },
        then: { properties: { databaseUrl: CommonEnv.DATABASE_URL }, required: ['databaseUrl'] },
      },
    ),
    externalNats: closed({ url: CommonEnv.NATS_URL }),
    natsAuth: closed({
      existingSecret: Type.String(),
      passwords: map(Type.String({ minLength: 1 }), 'NATS passwords by service name (bundled NATS)'),
    }),
    natsTls: closed({ enabled: Type.Boolean(), secretName: Type.String(), clientCertificate: Type.Boolean() }),
    nats: Type.Object(
      { enabled: Type.Boolean() },
      { additionalProperties: true, description: 'values of the NATS chart' },
    ),
    migrations: closed({
      enabled: Type.Boolean(),
      useHelmHooks: Type.Boolean(),
      backoffLimit: Type.Integer({ minimum: 0 }),
      activeDeadlineSeconds: Type.Integer({ minimum: 1 }),
      resources: Resources,
    }),
    gateway: closed({
      port: Port,
      service: closed({
        type: Type.Union([Type.Literal('ClusterIP'), Type.Literal('NodePort'), Type.Literal('LoadBalancer')]),
        port: Port,
        annotations: map(Type.String(), 'annotations'),
      }),
    }),
    ingress: closed({
      enabled: Type.Boolean(),
      className: Type.String(),
      host: Type.String({ pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' }),
      tlsSecretName: Type.String(),
      annotations: map(Type.String(), 'annotations'),
      // The gateway's TRUST_PROXY with the Ingress: a hop count (as a number or a string) or the variable's list.
      trustProxy: Type.Union([
        Type.Integer({ minimum: 0, maximum: 99 }),
        Type.String({ pattern: GatewayEnv.properties.TRUST_PROXY.pattern }),
      ]),
    }),
    global: Type.Optional(Type.Object({}, { description: 'values Helm shares with the NATS chart' })),
    // By name, so that the file does not change with the order the services start in.
    services: closed(
      Object.fromEntries(
        [...PLATFORM_SERVICES]
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((service) => [service.name, serviceSchema(service)]),
      ),
    ),
    topologySpread: closed({ enabled: Type.Boolean() }),
    commonLabels: map(Type.String(), 'labels'),
    podAnnotations: map(Type.String(), 'annotations'),
    nodeSelector: map(Type.String(), 'node labels'),
    tolerations: Type.Array(Type.Object({})),
    affinity: Type.Object({}),
    readOnlyRootFilesystem: Type.Boolean(),
    terminationGracePeriodSeconds: Type.Integer({ minimum: 0 }),
    networkPolicy: closed({
      enabled: Type.Boolean(),
      metricsNamespaceSelector: Type.Object({}),
      ingressNamespaceSelector: Type.Object({}),
      privateCIDRs: Type.Array(Type.String({ pattern: '^[0-9a-fA-F:.]+/[0-9]{1,3}$' })),
      extraEgress: Type.Array(Type.Object({})),
      nats: closed({ extraIngress: Type.Array(Type.Object({})) }),
      postgres: closed({
        podSelector: map(Type.String(), 'labels of the Postgres pods'),
        port: Port,
        extraIngress: Type.Array(Type.Object({})),
      }),
    }),
    metrics: closed({
      serviceMonitor: closed({
        enabled: Type.Boolean(),
        interval: Type.String({ pattern: '^[0-9]+(ms|s|m|h)$' }),
        labels: map(Type.String(), 'labels'),
      }),
      prometheusRule: closed({
        enabled: Type.Boolean(),
        labels: map(Type.String(), 'labels'),
      }),
      grafanaDashboard: closed({
        enabled: Type.Boolean(),
        labels: map(Type.String(), 'labels'),
        annotations: map(Type.String(), 'annotations'),
      }),
    }),
  });
}

/** The schema as written to the chart: plain JSON Schema (TypeBox's own markers are symbols and drop out). */
export const chartValuesSchemaJson = () =>
  JSON.stringify(
    {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'affiliate-platform values',
      ...chartValuesSchema(),
    },
    null,
    2,
  ) + '\n';

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const target = new URL('../charts/affiliate-platform/values.schema.json', import.meta.url).pathname;
  writeFileSync(target, chartValuesSchemaJson());
  process.stderr.write(`chart-schema: wrote ${target}\n`);
}
