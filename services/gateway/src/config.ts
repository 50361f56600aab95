import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, ConfigError, loadConfig, PUBLIC_BASE_URL } from '@platform/shared/config';
import { PASSWORD_COST } from '@platform/shared/passwords';
import { TRUST_PROXY, trustProxySetting } from './http/trust-proxy.ts';

export const GatewayEnv = Type.Object({
  ...CommonEnv,
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535, description: 'public HTTP port' }),
  HOST: Type.String({ default: '0.0.0.0' }),
  PUBLIC_BASE_URL,
  OPS_PORT: Type.Integer({ default: 9100, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  RPC_TIMEOUT_MS: Type.Integer({
    default: 5000,
    minimum: 50,
    maximum: 60000,
    description: 'how long a service may take to answer',
  }),
  KEY_CACHE_MS: Type.Integer({
    default: 1000,
    minimum: 0,
    maximum: 1000,
    description:
      'how long a key lookup is reused; at most 1 s, so revocation and plan changes reach every replica within a second',
  }),
  TRUST_PROXY,
  TRACKING_RATE_LIMIT_PER_MIN: Type.Integer({
    default: 120,
    minimum: 1,
    maximum: 100000,
    description:
      'visits one client IP may record per minute through the public /r/… links and POST /t/visit, across all replicas',
  }),
  GEO_COUNTRY_HEADER: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9-]{1,64}$',
      description:
        "the request header in which the ingress or CDN in front of the gateway sets the visitor's ISO 3166-1 " +
        'alpha-2 country (CF-IPCountry on Cloudflare, CloudFront-Viewer-Country on CloudFront), kept with each ' +
        'referral click; unset, clicks have no country. Only set it when that proxy always sets or overwrites the ' +
        'header: a client can send any header, and one passed through unchanged would let visitors choose their country',
      examples: ['CF-IPCountry'],
    }),
  ),
  PASSWORD_HASH_COST: Type.Integer({
    default: PASSWORD_COST,
    minimum: 10,
    maximum: PASSWORD_COST,
    description: `scrypt cost (log2 N) of new dashboard password hashes; below ${PASSWORD_COST} only when APP_ENV=test`,
  }),
  BILLING_PAYMENTS: Type.Optional(
    Type.Union([Type.Literal('sandbox'), Type.Literal('approval')], {
      description:
        'how plan upgrades are paid: sandbox (the payment service test cards, test money; the default outside production, refused in it) or approval (no processor for live payments: an upgrade is a request the operator approves; the default in production)',
    }),
  ),
  BILLING_WEBHOOK_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      description:
        'the platform operator’s endpoint for billing events (upgrades, renewals, past_due, downgrades); none sent when unset',
    }),
  ),
  BILLING_WEBHOOK_SECRET: Type.Optional(
    Type.String({
      pattern: '^whsec_[A-Za-z0-9+/=]{32,}$',
      description: 'signs the billing events (Standard Webhooks, whsec_…); required with BILLING_WEBHOOK_URL',
    }),
  ),
});
export type GatewayConfig = Static<typeof GatewayEnv>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => {
  const config = loadConfig(GatewayEnv, env);
  trustProxySetting(config.TRUST_PROXY); // each address checked at start, not at the first request
  if (config.PASSWORD_HASH_COST < PASSWORD_COST && config.APP_ENV !== 'test')
    throw new ConfigError('PASSWORD_HASH_COST', `must be ${PASSWORD_COST} unless APP_ENV=test`);
  if (config.BILLING_WEBHOOK_URL && !config.BILLING_WEBHOOK_SECRET)
    throw new ConfigError('BILLING_WEBHOOK_SECRET', 'is required with BILLING_WEBHOOK_URL: the events are signed');
  if (config.BILLING_PAYMENTS === 'sandbox' && config.APP_ENV === 'production')
    throw new ConfigError('BILLING_PAYMENTS', 'sandbox pays plans with test money: not in production');
  return config;
};

/**
 * How upgrades are paid (docs/BILLING.md): the sandbox's test cards where it was asked for, or outside production
 * when nothing was said (so that `npm start` upgrades with the test card); otherwise a request the operator approves.
 */
export const billingPayments = (config: GatewayConfig): 'sandbox' | 'approval' =>
  config.BILLING_PAYMENTS ?? (config.APP_ENV === 'production' ? 'approval' : 'sandbox');
