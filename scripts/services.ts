import type { TObject } from '@sinclair/typebox';
import { AffiliatesEnv } from '@platform/affiliates/config';
import { CommissionsEnv } from '@platform/commissions/config';
import { DispatcherEnv } from '@platform/dispatcher/config';
import { EventsEnv } from '@platform/events/config';
import { GatewayEnv } from '@platform/gateway/config';
import { PaymentsEnv } from '@platform/payments/config';

/**
 * The platform's services: the one list that `npm start` (scripts/start.ts), the bundles and the container image
 * (scripts/bundle.ts, build.ts, image-layout.ts), the chart's values schema (scripts/chart-schema.ts) and the
 * README's test read, and the Tiltfile through `npm run -s services -- --json`. A new service is a folder of
 * services/ with the skeleton (docs/CONTRIBUTING.md) and a line here. The merchant dashboard is not one: it is a
 * browser app, built by services/dashboard/build.ts and served by the gateway.
 *
 * Everything but the name and the configuration schema is read from the schema, so that nothing here can disagree
 * with what the service checks at start: its ports are the defaults of OPS_PORT and PORT, its database the
 * DATABASE_URL it requires.
 */
export interface PlatformService {
  name: string;
  /** The process's entry point, from the checkout's root. */
  entry: string;
  /** The variables it reads, as it checks them at start (the README's table, the chart's `env` values). */
  env: TObject;
  /** Its ops port (health, readiness, metrics) when OPS_PORT is unset. */
  opsPort: number;
  /** Its public HTTP port when PORT is unset; null for a service that is reached over NATS only. */
  httpPort: number | null;
  /** Whether it connects to Postgres (DATABASE_URL). */
  database: boolean;
}

/** In the order `npm start` starts them: the gateway last, once what it forwards to is up. */
const ENVS: Record<string, TObject> = {
  affiliates: AffiliatesEnv,
  events: EventsEnv,
  commissions: CommissionsEnv,
  dispatcher: DispatcherEnv,
  payments: PaymentsEnv,
  gateway: GatewayEnv,
};

function portDefault(name: string, env: TObject, variable: string): number | null {
  const schema = env.properties[variable] as { default?: unknown } | undefined;
  if (!schema) return null;
  if (typeof schema.default !== 'number') throw new Error(`services: ${name}'s ${variable} has no default port`);
  return schema.default;
}

function describe(name: string, env: TObject): PlatformService {
  const opsPort = portDefault(name, env, 'OPS_PORT');
  if (opsPort === null) throw new Error(`services: ${name} reads no OPS_PORT`);
  return {
    name,
    entry: `services/${name}/src/main.ts`,
    env,
    opsPort,
    httpPort: portDefault(name, env, 'PORT'),
    database: 'DATABASE_URL' in env.properties,
  };
}

export const PLATFORM_SERVICES: readonly PlatformService[] = Object.entries(ENVS).map(([name, env]) =>
  describe(name, env),
);

/** Their names, in the same order. */
export const SERVICES: readonly string[] = PLATFORM_SERVICES.map((service) => service.name);

/**
 * `npm run -s services -- --json`: the registry for what is not TypeScript (the Tiltfile): each service's name and
 * ports, in the order above.
 */
if (import.meta.main) {
  if (!process.argv.includes('--json')) {
    process.stderr.write('usage: npm run -s services -- --json\n');
    process.exit(2);
  }
  const listed = PLATFORM_SERVICES.map(({ name, httpPort, opsPort }) => ({ name, httpPort, opsPort }));
  process.stdout.write(`${JSON.stringify(listed)}\n`);
}
