import { parseArgs } from 'node:util';
import { loadConfig, CommonEnv } from '@platform/shared/config';
import { Type } from '@sinclair/typebox';
import { connectDatabase, type Sql } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import * as analytics from './admin/analytics.ts';
import * as commands from './admin/commands.ts';
import * as coupons from './admin/coupons.ts';
import * as payouts from './admin/payouts.ts';
import * as platformAccounts from './admin/platform-accounts.ts';
import * as platformKeys from './admin/platform-keys.ts';
import * as plans from './admin/plans.ts';
import * as programme from './admin/programme.ts';
import * as secrets from './admin/secrets.ts';
import * as webhooks from './admin/webhooks.ts';

const USAGE = `usage: npm run -s admin -- <command>        (-s: npm prints no banner, so the JSON output parses)
  merchant create --name N --plan P          create a merchant (plans: ${commands.PLANS.join(', ')})
  merchant set-plan <merchant_id> <plan>     change a merchant's plan
  merchant show <merchant_id>
  key create <merchant_id> --scopes read,write [--rate-limit N]   prints the key value, once
  key update <key_id> [--scopes S] [--rate-limit N]
  key revoke <key_id>
  key list <merchant_id>
  key audit <key_id>                          the key's audit log and daily usage
  user create <merchant_id> --email E --password P                 a dashboard login
  merchant settings <merchant_id> --set key=value [--set …]        e.g. --set default_rate=0.15 --set level_rates=[0.1,0.05]
                                              --set commission_rules.signup='{"kind":"flat","amount":"5.00"}'
  tier create <merchant_id> --name N --rate R --threshold T        rate 0..1; threshold: attributed revenue
  tier list <merchant_id>
  coupon create <merchant_id> --affiliate <affiliate_id> --code C   a coupon code (unique per merchant, any case)
  coupon list <merchant_id> [--affiliate <affiliate_id>]
  coupon delete <merchant_id> <coupon_id>
${platformKeys.PLATFORM_KEY_USAGE}
${platformAccounts.PLATFORM_ACCOUNT_USAGE}
${payouts.PAYOUT_USAGE}
${plans.PLAN_USAGE}
${webhooks.WEBHOOK_USAGE}
${secrets.SECRETS_USAGE}
${analytics.ANALYTICS_USAGE}`;

type Values = ReturnType<typeof parse>['values'];
type Handler = (sql: Sql, args: string[], values: Values) => Promise<unknown>;

const need = (value: string | undefined, what: string): string => {
  if (!value) throw new commands.UsageError(`missing ${what}\n${USAGE}`);
  return value;
};
const rateLimitOf = (values: Values) => (values['rate-limit'] === undefined ? undefined : Number(values['rate-limit']));

/** Every command but `webhook …` (webhooks.webhookCommand takes those), by its two words. */
const COMMANDS: Record<string, Handler> = {
  'merchant create': (sql, _, v) => commands.createMerchant(sql, need(v.name, '--name'), need(v.plan, '--plan')),
  'merchant set-plan': (sql, [id, plan]) => commands.setPlan(sql, need(id, '<merchant_id>'), need(plan, '<plan>')),
  'merchant show': (sql, [id]) => commands.showMerchant(sql, need(id, '<merchant_id>')),
  'merchant settings': (sql, [id], v) => programme.setMerchantSettings(sql, need(id, '<merchant_id>'), v.set ?? []),
  'key create': (sql, [id], v) =>
    commands.createKey(sql, need(id, '<merchant_id>'), need(v.scopes, '--scopes'), rateLimitOf(v)),
  'key update': (sql, [id], v) =>
    commands.updateKey(sql, need(id, '<key_id>'), { scopes: v.scopes, rateLimit: rateLimitOf(v) }),
  'key revoke': (sql, [id]) => commands.revokeKey(sql, need(id, '<key_id>')),
  'key list': (sql, [id]) => commands.listKeys(sql, need(id, '<merchant_id>')),
  'key audit': (sql, [id]) => commands.keyAudit(sql, need(id, '<key_id>')),
  'user create': (sql, [id], v) =>
    commands.createUser(sql, need(id, '<merchant_id>'), need(v.email, '--email'), need(v.password, '--password')),
  'tier create': (sql, [id], v) =>
    programme.createTier(sql, need(id, '<merchant_id>'), {
      name: need(v.name, '--name'),
      rate: need(v.rate, '--rate'),
      threshold: need(v.threshold, '--threshold'),
    }),
  'tier list': (sql, [id]) => programme.listTiers(sql, need(id, '<merchant_id>')),
  'coupon create': (sql, [id], v) =>
    coupons.createCoupon(sql, need(id, '<merchant_id>'), need(v.affiliate, '--affiliate'), need(v.code, '--code')),
  'coupon list': (sql, [id], v) => coupons.listAllCoupons(sql, need(id, '<merchant_id>'), v.affiliate),
  'coupon delete': (sql, [id, couponId]) =>
    coupons.removeCoupon(sql, need(id, '<merchant_id>'), need(couponId, '<coupon_id>')),
  'secrets re-encrypt': (sql) => secrets.reEncryptSecrets(sql),
  'payout create': (sql, [id], v) => payouts.createPayoutsCommand(sql, need(id, '<merchant_id>'), v.affiliate),
  'payout list': (sql, [id], v) => payouts.listPayoutsCommand(sql, need(id, '<merchant_id>'), v.status, v.affiliate),
  'payout mark': (sql, [id, payoutId, status], v) =>
    payouts.markPayoutCommand(sql, need(id, '<merchant_id>'), need(payoutId, '<payout_id>'), need(status, '<status>'), {
      reference: v.reference,
      reason: v.reason,
    }),
  'platform-key create': (sql, _, v) => platformKeys.createPlatformKey(sql, v.mode, rateLimitOf(v)),
  'platform-key revoke': (sql, [id]) => platformKeys.revokePlatformKey(sql, need(id, '<key_id>')),
  'platform-key list': (sql) => platformKeys.listPlatformKeys(sql),
  'platform-account bind': (sql, [id, merchantId]) =>
    platformAccounts.bindPlatformAccount(sql, need(id, '<acct_id>'), need(merchantId, '<merchant_id>')),
  'plan approve': (sql, [id]) => plans.approvePlan(sql, need(id, '<merchant_id>')),
  'analytics requeue': (sql, _, v) => analytics.requeueCommand(sql, v.merchant, v.id),
};

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      name: { type: 'string' },
      plan: { type: 'string' },
      scopes: { type: 'string' },
      'rate-limit': { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      affiliate: { type: 'string' },
      code: { type: 'string' },
      set: { type: 'string', multiple: true },
      rate: { type: 'string' },
      threshold: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      event: { type: 'string' },
      description: { type: 'string' },
      enabled: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      mode: { type: 'string' },
      status: { type: 'string' },
      reference: { type: 'string' },
      reason: { type: 'string' },
      merchant: { type: 'string' },
      id: { type: 'string', multiple: true },
    },
  });
}

/** Answers what to print: the command's result as JSON, or the usage text when help was asked for. */
async function main(argv: string[]): Promise<{ json: unknown } | { help: string }> {
  const { positionals, values } = parse(argv);
  const [group, action, ...rest] = positionals;
  if (values.help || group === 'help') return { help: USAGE };
  if (group === undefined) throw new commands.UsageError(USAGE);
  const handler = COMMANDS[`${group} ${action}`];
  if (!handler && group !== 'webhook') {
    throw new commands.UsageError(
      `unknown command "${[group, action].filter(Boolean).join(' ')}": \`npm run -s admin -- --help\` lists the commands`,
    );
  }
  const config = loadConfig(Type.Object({ DATABASE_URL: CommonEnv.DATABASE_URL }));
  const sql = connectDatabase(config.DATABASE_URL, { max: 2, applicationName: 'admin' });
  try {
    await migrate(sql);
    return {
      json: handler ? await handler(sql, rest, values) : await webhooks.webhookCommand(sql, action, rest, values),
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * The CLI on `argv` as its binary runs it, printing through `io` (a test runs it in its own process this way):
 * answers the exit code. A command that fails part of its work sets process.exitCode itself.
 */
export async function runAdmin(
  argv: string[],
  io: { out: (text: string) => void; err: (text: string) => void } = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  },
): Promise<number> {
  try {
    const result = await main(argv);
    io.out('help' in result ? `${result.help}\n` : JSON.stringify(result.json, null, 2) + '\n');
    return 0;
  } catch (caught) {
    const err = caught as Error;
    // Any argument the parser refuses (unknown option, option without its value, …) is a usage error.
    const badArgs = String((err as { code?: string }).code ?? '').startsWith('ERR_PARSE_ARGS_');
    const known = err instanceof commands.UsageError || err.name === 'ConfigError' || badArgs;
    io.err(`admin: ${known ? err.message : `failed: ${err.message}`}${badArgs ? `\n${USAGE}` : ''}\n`);
    return known ? 2 : 1;
  }
}

if (import.meta.main) {
  const code = await runAdmin(process.argv.slice(2));
  if (code !== 0) process.exitCode = code;
}
