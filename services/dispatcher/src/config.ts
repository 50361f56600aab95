import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, TopologyEnv, ConfigError, loadConfig } from '@platform/shared/config';

/** Where the platform sends e-mail (the chart's schema reads it too: it comes from the Secret there). */
export const SmtpUrl = Type.String({
  pattern: '^smtps?://[^\\s]+$',
  description:
    'where the platform sends e-mail: smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465. Required in production; elsewhere, when unset, mails go to the development mailbox (GET /dev/mailbox on the gateway)',
});

export const DispatcherEnv = Type.Object({
  ...CommonEnv,
  ...TopologyEnv,
  OPS_PORT: Type.Integer({ default: 9104, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  WEBHOOK_BACKOFF_SCALE: Type.Number({
    default: 1,
    exclusiveMinimum: 0,
    maximum: 100,
    description: 'multiplies the backoff table (5 s … 24 h); tests and benches shrink it. Retry-After is never scaled',
  }),
  WEBHOOK_ATTEMPT_TIMEOUT_MS: Type.Integer({
    default: 15_000,
    minimum: 100,
    maximum: 120_000,
    description: 'whole attempt, connect to response body',
  }),
  WEBHOOK_CONNECT_TIMEOUT_MS: Type.Integer({
    default: 5_000,
    minimum: 50,
    maximum: 60_000,
    description: 'DNS and TCP/TLS connect',
  }),
  WEBHOOK_CONCURRENCY: Type.Integer({
    default: 64,
    minimum: 1,
    maximum: 4096,
    description: 'attempts in flight per replica',
  }),
  // 16: a failing endpoint gets one slot whatever this says, so a higher limit only lets a healthy, busy endpoint
  // keep up (at 4, one endpoint could not take the benchmark's event rate within its latency targets).
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({
    default: 16,
    minimum: 1,
    maximum: 256,
    description: 'attempts in flight per endpoint across all replicas (1 while the endpoint is failing)',
  }),
  WEBHOOK_SWEEP_INTERVAL_MS: Type.Integer({
    default: 1_000,
    minimum: 50,
    maximum: 60_000,
    description: 'how often due deliveries are looked for',
  }),
  WEBHOOK_REQUEUE_AFTER_MS: Type.Integer({
    default: 30_000,
    minimum: 100,
    maximum: 3_600_000,
    description: 'a hint not consumed after this long is published again (covers lost or purged messages)',
  }),
  WEBHOOK_RECONCILE_AFTER_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    maximum: 86_400_000,
    description: 'an outbox event published this long ago without a webhook message is fanned out from Postgres',
  }),
  WEBHOOK_RETENTION_DAYS: Type.Integer({
    default: 30,
    minimum: 1,
    maximum: 365,
    description: 'how long delivery records are kept for replay',
  }),
  WEBHOOK_ALLOW_HTTP: Type.Optional(
    Type.Boolean({ description: 'accept http:// URLs (default: only when APP_ENV=development)' }),
  ),
  WEBHOOK_ALLOWED_CIDRS: Type.Optional(
    Type.String({
      pattern: '^[0-9A-Fa-f:./,\\s]*$',
      description:
        'comma-separated CIDRs allowed despite being non-public (default: loopback when APP_ENV=development, none otherwise)',
    }),
  ),
  SMTP_URL: Type.Optional(SmtpUrl),
  MAIL_FROM: Type.Optional(
    Type.String({
      minLength: 3,
      pattern: '@',
      description:
        'the From of every mail, an address or `Name <address>`. Required in production; elsewhere Affiliate platform <no-reply@localhost>',
    }),
  ),
  DISPATCHER_ID: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9._-]{1,64}$',
      description: 'names this replica in leases (default: host and pid)',
    }),
  ),
});
export type DispatcherConfig = Static<typeof DispatcherEnv>;

/** MAIL_FROM outside production when unset. */
export const DEVELOPMENT_MAIL_FROM = 'Affiliate platform <no-reply@localhost>';

export function loadDispatcherConfig(env: NodeJS.ProcessEnv = process.env): DispatcherConfig {
  const config = loadConfig(DispatcherEnv, env);
  if (config.WEBHOOK_CONNECT_TIMEOUT_MS > config.WEBHOOK_ATTEMPT_TIMEOUT_MS) {
    throw new ConfigError('WEBHOOK_CONNECT_TIMEOUT_MS', 'must not exceed WEBHOOK_ATTEMPT_TIMEOUT_MS');
  }
  // A production platform that cannot mail cannot verify a sign-up: it does not start rather than lose the mails.
  if (config.APP_ENV === 'production') {
    if (!config.SMTP_URL) throw new ConfigError('SMTP_URL', 'is required when APP_ENV=production');
    if (!config.MAIL_FROM) throw new ConfigError('MAIL_FROM', 'is required when APP_ENV=production');
  }
  return config;
}
