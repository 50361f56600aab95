import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { DATABASE_LOCK_TIMEOUT_DEFAULT_MS, DATABASE_STATEMENT_TIMEOUT_DEFAULT_MS } from './db.ts';
import { TracingEnv } from './tracing/env.ts';

/**
 * Configuration comes only from environment variables. Each process declares the
 * variables it reads as a TypeBox object; `loadConfig` parses them once at start.
 * A bad value throws ConfigError naming the variable, and `main` exits on it.
 */
export class ConfigError extends Error {
  readonly variable: string;

  constructor(variable: string, problem: string, options?: ErrorOptions) {
    super(`configuration: ${variable} ${problem}`, options);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: false });

export function loadConfig<P extends TProperties>(
  schema: TObject<P>,
  env: NodeJS.ProcessEnv = process.env,
): Static<TObject<P>> {
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') values[name] = raw;
  }
  const validate = ajv.compile(schema);
  if (!validate(values)) {
    const err = validate.errors![0]!;
    const variable = err.instancePath.replace(/^\//, '') || String(err.params['missingProperty'] ?? '?');
    throw new ConfigError(variable, `${err.message ?? 'is invalid'} (got ${JSON.stringify(env[variable] ?? null)})`);
  }
  return values as Static<TObject<P>>;
}

// The variables that every service reads; each service adds its own.
export const CommonEnv = {
  APP_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
    default: 'development',
    description: 'development allows a built-in encryption key and (for webhooks) http and loopback URLs',
  }),
  DATABASE_URL: Type.String({
    default: 'postgres://postgres@127.0.0.1:5432/affiliate',
    pattern: '^postgres(ql)?://',
    description: 'Postgres connection string',
  }),
  DATABASE_POOL_SIZE: Type.Integer({ default: 10, minimum: 1, maximum: 200 }),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({
    default: DATABASE_STATEMENT_TIMEOUT_DEFAULT_MS,
    minimum: 100,
    maximum: 600_000,
    description:
      "Postgres statement_timeout of the process's connections: keep it below the gateway's RPC_TIMEOUT_MS, so that an operation fails (503) while its caller waits instead of running on after it (migrations have none)",
  }),
  DATABASE_LOCK_TIMEOUT_MS: Type.Integer({
    default: DATABASE_LOCK_TIMEOUT_DEFAULT_MS,
    minimum: 100,
    maximum: 600_000,
    description:
      "Postgres lock_timeout of the process's connections: how long a statement waits for a row or table lock held by another transaction; below RPC_TIMEOUT_MS too",
  }),
  NATS_URL: Type.String({
    default: 'nats://127.0.0.1:4222',
    pattern: '^(nats|tls|ws|wss)://[^,\\s]+(\\s*,\\s*(nats|tls|ws|wss)://[^,\\s]+)*$',
    description:
      'the NATS seed servers, comma-separated (nats://, tls://, ws:// or wss:// each); the client learns the rest of the cluster from them',
  }),
  NATS_PREFIX: Type.String({
    default: 'aff',
    pattern: '^[a-z][a-z0-9_]{0,31}$',
    description: 'first token of every subject and prefix of every stream name (isolates environments)',
  }),
  NATS_USER: Type.Optional(
    Type.String({
      // A subject token too: the process's replies come to its inbox `_INBOX.<user>.…`.
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description:
        "the process's own NATS user (`npm run nats:config` writes each one's; docs/NATS-SECURITY.md); with NATS_PASSWORD",
    }),
  ),
  NATS_PASSWORD: Type.Optional(Type.String({ minLength: 1, description: "NATS_USER's password" })),
  NATS_TLS_CA: Type.Optional(
    Type.String({
      minLength: 1,
      description: "path of the CA certificate (PEM) the NATS servers' certificates are checked against; turns TLS on",
    }),
  ),
  NATS_TLS_CERT: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'path of the client certificate (PEM) for NATS mutual TLS; with NATS_TLS_KEY',
    }),
  ),
  NATS_TLS_KEY: Type.Optional(Type.String({ minLength: 1, description: "path of NATS_TLS_CERT's private key (PEM)" })),
  LOG_LEVEL: Type.Union(
    [Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error'), Type.Literal('silent')],
    { default: 'info' },
  ),
  ENCRYPTION_KEY: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9+/=_-]{43,}$',
      description: 'base64 of 32 random bytes; encrypts secrets at rest and signs cursors. Required in production',
    }),
  ),
  ENCRYPTION_KEYS_PREVIOUS: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9+/=_-]{43,}(,[A-Za-z0-9+/=_-]{43,})*$',
      description:
        'comma-separated earlier ENCRYPTION_KEY values: secrets encrypted under them still decrypt, until `admin secrets re-encrypt` has moved them to the current key',
    }),
  ),
  ...TracingEnv,
};

/** The platform's public address (scheme and host): referral links, and the OpenAPI document's server. */
export const PUBLIC_BASE_URL = Type.String({
  default: 'http://localhost:8080',
  pattern: '^https?://[^/]+$',
  description:
    "the gateway's public address: base of referral links when the merchant has no tracking host, and the OpenAPI document's server",
});

/** The relay's default pacing; the bench's own producer relay uses it too, as the services' relays do. */
export const OUTBOX_RELAY_INTERVAL_DEFAULT_MS = 20;

// Read by the services that run an outbox relay (affiliates, events, commissions).
export const OutboxEnv = {
  OUTBOX_RETENTION_DAYS: Type.Integer({
    default: 7,
    minimum: 1,
    maximum: 3650,
    description:
      'published outbox rows older than this, once the reconcilers have passed them, are deleted (at start, then hourly, by each service that runs a relay)',
  }),
  OUTBOX_RELAY_INTERVAL_MS: Type.Integer({
    default: OUTBOX_RELAY_INTERVAL_DEFAULT_MS,
    minimum: 0,
    maximum: 1000,
    description:
      'least time between two publishing passes of the relay woken by commits: a commit after a quiet spell is published at once, under load each pass carries what was committed in the interval (0: every wake-up)',
  }),
};

// Read by the services that own JetStream streams and consumers (all but the gateway).
export const TopologyEnv = {
  TOPOLOGY_CHECK_INTERVAL_MS: Type.Integer({
    default: 2000,
    minimum: 100,
    maximum: 60_000,
    description:
      'how often a service checks that the JetStream streams and its consumers exist, recreating what is missing (also at once when a publish or a pull finds one gone)',
  }),
  JETSTREAM_REPLICAS: Type.Union([Type.Literal('auto'), Type.Literal('1'), Type.Literal('3'), Type.Literal('5')], {
    default: 'auto',
    description:
      'num_replicas of the streams and durable consumers: auto is 3 when the NATS cluster has at least 3 servers (as its servers advertise them to clients), else 1. A stream or consumer with fewer is scaled up in place by the topology check; none is ever scaled down',
  }),
};

export const CommonConfig = Type.Object(CommonEnv);
export type CommonConfig = Static<typeof CommonConfig>;
export const OutboxConfig = Type.Object(OutboxEnv);
export const TopologyConfig = Type.Object(TopologyEnv);
export type TopologyConfig = Static<typeof TopologyConfig>;
export type OutboxConfig = Static<typeof OutboxConfig>;

function keyOf(variable: string, value: string): Buffer {
  const key = Buffer.from(value, 'base64');
  if (key.length < 32) throw new ConfigError(variable, 'must decode to at least 32 bytes');
  return key.subarray(0, 32);
}

/** Outside production a fixed development key is used, so that `npm start` needs no setup. */
export function encryptionKey(config: Pick<CommonConfig, 'APP_ENV' | 'ENCRYPTION_KEY'>): Buffer {
  if (config.ENCRYPTION_KEY) return keyOf('ENCRYPTION_KEY', config.ENCRYPTION_KEY);
  if (config.APP_ENV === 'production') throw new ConfigError('ENCRYPTION_KEY', 'is required when APP_ENV=production');
  return Buffer.from('development-only-key-not-secret!', 'utf8');
}

/**
 * The keys secrets at rest may be decrypted with, the current one first: ENCRYPTION_KEY, then each of
 * ENCRYPTION_KEYS_PREVIOUS in the order given. New values are encrypted under the first only.
 */
export function decryptionKeys(
  config: Pick<CommonConfig, 'APP_ENV' | 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS'>,
): Buffer[] {
  const previous = config.ENCRYPTION_KEYS_PREVIOUS
    ? config.ENCRYPTION_KEYS_PREVIOUS.split(',').map((k) => keyOf('ENCRYPTION_KEYS_PREVIOUS', k))
    : [];
  return [encryptionKey(config), ...previous];
}
