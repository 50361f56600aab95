import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, loadConfig, PUBLIC_BASE_URL } from '@platform/shared/config';
import { TRUST_PROXY, trustProxySetting } from './trust-proxy.ts';

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
});
export type GatewayConfig = Static<typeof GatewayEnv>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig => {
  const config = loadConfig(GatewayEnv, env);
  trustProxySetting(config.TRUST_PROXY); // each address checked at start, not at the first request
  return config;
};
