import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CommonEnv } from '@platform/shared/config';
import {
  NATS_CLIENTS,
  authorizationBlock,
  natsPermissions,
  natsUserName,
  type NatsClient,
  type NatsUser,
} from '@platform/shared/nats-access';

/**
 * `npm run nats:config -- [--prefix aff] [--out nats-auth] [--rotate]`: each process's NATS user, from the catalogue's
 * access table (shared/src/nats-access.ts). Writes `<out>/authorization.conf`, the nats-server block to include in
 * the server's configuration, and `<out>/<process>.env` (NATS_USER, NATS_PASSWORD) for each process. Passwords are
 * random, or kept from the env files already in `<out>` (so that a run after a change of permissions rotates
 * nothing) unless `--rotate`. `--chart` writes instead the permissions the chart renders for its bundled NATS
 * (charts/affiliate-platform/files/nats-permissions.json, with the prefix left for the chart to fill in).
 */

/** The prefix's place in the chart's copy: the chart puts NATS_PREFIX there, and its upper case in the stream names. */
export const CHART_PREFIX_PLACEHOLDER = '{prefix}';

export const CHART_PERMISSIONS_FILE = new URL(
  '../charts/affiliate-platform/files/nats-permissions.json',
  import.meta.url,
).pathname;

export const chartPermissionsJson = () =>
  JSON.stringify(
    Object.fromEntries(NATS_CLIENTS.map((client) => [client, natsPermissions(client, CHART_PREFIX_PLACEHOLDER)])),
    null,
    2,
  ) + '\n';

const newPassword = () => randomBytes(24).toString('base64url');

function keptPassword(envFile: string, user: string): string | null {
  if (!existsSync(envFile)) return null;
  const values = Object.fromEntries(
    readFileSync(envFile, 'utf8')
      .split('\n')
      .map((line) => line.match(/^([A-Z_]+)=(.*)$/))
      .filter((m): m is RegExpMatchArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  return values['NATS_USER'] === user && values['NATS_PASSWORD'] ? values['NATS_PASSWORD'] : null;
}

/** Writes the authorization block and the env files into `out`; the users written. */
export function writeNatsConfig(opts: { prefix: string; out: string; rotate?: boolean }): NatsUser[] {
  if (!new RegExp(CommonEnv.NATS_PREFIX.pattern!).test(opts.prefix))
    throw new Error(`nats:config: --prefix must match ${CommonEnv.NATS_PREFIX.pattern} (got ${opts.prefix})`);
  mkdirSync(opts.out, { recursive: true, mode: 0o700 });
  const users = NATS_CLIENTS.map((client: NatsClient): NatsUser => {
    const user = natsUserName(client, opts.prefix);
    const envFile = join(opts.out, `${client}.env`);
    const password = (!opts.rotate && keptPassword(envFile, user)) || newPassword();
    writeFileSync(envFile, `NATS_USER=${user}\nNATS_PASSWORD=${password}\n`, { mode: 0o600 });
    return { user, password, permissions: natsPermissions(client, opts.prefix) };
  });
  const header = `# NATS users of the affiliate platform (NATS_PREFIX=${opts.prefix}), written by \`npm run nats:config\`.\n`;
  writeFileSync(join(opts.out, 'authorization.conf'), header + authorizationBlock(users), { mode: 0o600 });
  return users;
}

if (process.argv[1] && new URL(import.meta.url).pathname === resolve(process.argv[1])) {
  const { values } = parseArgs({
    options: {
      prefix: { type: 'string', default: 'aff' },
      out: { type: 'string', default: 'nats-auth' },
      rotate: { type: 'boolean', default: false },
      chart: { type: 'boolean', default: false },
    },
  });
  if (values.chart) {
    writeFileSync(CHART_PERMISSIONS_FILE, chartPermissionsJson());
    process.stderr.write(`nats:config: wrote ${CHART_PERMISSIONS_FILE}\n`);
  } else {
    const out = resolve(values.out);
    const users = writeNatsConfig({ prefix: values.prefix, out, rotate: values.rotate });
    process.stderr.write(
      `nats:config: wrote ${join(out, 'authorization.conf')} and the env files of ${users.map((u) => u.user).join(', ')}\n`,
    );
  }
}
