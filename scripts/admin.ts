import { parseArgs } from 'node:util';
import { loadConfig, CommonEnv } from '@platform/shared/config';
import { Type } from '@sinclair/typebox';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import * as commands from './admin/commands.ts';
import * as coupons from './admin/coupons.ts';
import * as programme from './admin/programme.ts';
import * as secrets from './admin/secrets.ts';
import * as webhooks from './admin/webhooks.ts';

const USAGE = `usage: npm run admin -- <command>
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
${webhooks.WEBHOOK_USAGE}
${secrets.SECRETS_USAGE}`;

async function main(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
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
    },
  });
  const [group, action, ...rest] = positionals;
  const config = loadConfig(Type.Object({ DATABASE_URL: CommonEnv.DATABASE_URL }));
  const sql = connectDatabase(config.DATABASE_URL, { max: 2, applicationName: 'admin' });
  const need = (value: string | undefined, what: string): string => {
    if (!value) throw new commands.UsageError(`missing ${what}\n${USAGE}`);
    return value;
  };
  const rateLimit = values['rate-limit'] === undefined ? undefined : Number(values['rate-limit']);
  try {
    await migrate(sql);
    switch (`${group} ${action}`) {
      case 'merchant create':
        return await commands.createMerchant(sql, need(values.name, '--name'), need(values.plan, '--plan'));
      case 'merchant set-plan':
        return await commands.setPlan(sql, need(rest[0], '<merchant_id>'), need(rest[1], '<plan>'));
      case 'merchant show':
        return await commands.showMerchant(sql, need(rest[0], '<merchant_id>'));
      case 'key create':
        return await commands.createKey(sql, need(rest[0], '<merchant_id>'), need(values.scopes, '--scopes'), rateLimit);
      case 'key update':
        return await commands.updateKey(sql, need(rest[0], '<key_id>'), { scopes: values.scopes, rateLimit });
      case 'key revoke':
        return await commands.revokeKey(sql, need(rest[0], '<key_id>'));
      case 'key list':
        return await commands.listKeys(sql, need(rest[0], '<merchant_id>'));
      case 'key audit':
        return await commands.keyAudit(sql, need(rest[0], '<key_id>'));
      case 'user create':
        return await commands.createUser(sql, need(rest[0], '<merchant_id>'), need(values.email, '--email'), need(values.password, '--password'));
      case 'merchant settings':
        return await programme.setMerchantSettings(sql, need(rest[0], '<merchant_id>'), values.set ?? []);
      case 'tier create':
        return await programme.createTier(sql, need(rest[0], '<merchant_id>'), {
          name: need(values.name, '--name'),
          rate: need(values.rate, '--rate'),
          threshold: need(values.threshold, '--threshold'),
        });
      case 'tier list':
        return await programme.listTiers(sql, need(rest[0], '<merchant_id>'));
      case 'coupon create':
        return await coupons.createCoupon(sql, need(rest[0], '<merchant_id>'), need(values.affiliate, '--affiliate'), need(values.code, '--code'));
      case 'coupon list':
        return await coupons.listAllCoupons(sql, need(rest[0], '<merchant_id>'), values.affiliate);
      case 'secrets re-encrypt':
        return await secrets.reEncryptSecrets(sql);
      case 'coupon delete':
        return await coupons.removeCoupon(sql, need(rest[0], '<merchant_id>'), need(rest[1], '<coupon_id>'));
      default:
        if (group === 'webhook') return await webhooks.webhookCommand(sql, action, rest, values);
        throw new commands.UsageError(USAGE);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  },
  (err: Error) => {
    // Any argument the parser refuses (unknown option, option without its value, …) is a usage error.
    const badArgs = String((err as { code?: string }).code ?? '').startsWith('ERR_PARSE_ARGS_');
    const known = err instanceof commands.UsageError || err.name === 'ConfigError' || badArgs;
    process.stderr.write(`admin: ${known ? err.message : `failed: ${err.message}`}${badArgs ? `\n${USAGE}` : ''}\n`);
    process.exitCode = known ? 2 : 1;
  },
);
