import t, { type Test } from 'tap';
import { runAdmin } from '../helpers/cli.ts';
import { newId } from '@platform/shared/ids';
import { startPlatform, type Platform } from '../helpers/platform.ts';
import type { ApiResponse } from '../helpers/client.ts';
import { expectError, expectInvalid as invalid } from '../helpers/errors.ts';
import { UsageError } from '../../scripts/admin/commands.ts';
import {
  awaitProcessed,
  createTier,
  setMerchantSettings,
  commissionsOfEvent,
  conversion,
  createAffiliate,
  publishConversion,
  recordConversions,
  startCommissions,
} from '../helpers/commissions.ts';
import { jetstream } from '@nats-io/jetstream';
import { outboxSubject } from '@platform/shared/catalogue';

const platform: Platform = await startPlatform(t);
const { logs } = await startCommissions(t, platform);
const m = await platform.merchant();
const affiliate = await createAffiliate(m.client, { email: 'seller@example.com' });
const conversions = Array.from({ length: 3 }, () => conversion({ affiliate_id: affiliate.id, amount: '10.00' }));
await recordConversions(platform.sql, m.id, conversions);
await awaitProcessed(
  platform.sql,
  m.id,
  conversions.map((c) => c.event_id),
);
const [pendingId, voidedId, paidId] = (
  await platform.sql<{ id: string }[]>`
  select id from commissions where merchant_id = ${m.id} order by created_at, id`
).map((r) => r.id);
await platform.sql`update commissions set status = 'voided', voided_at = now(), void_reason = 'manual' where id = ${voidedId!}`;
await platform.sql`update commissions set status = 'paid', approved_at = now(), paid_at = now() where id = ${paidId!}`;

const notFound = (t: Test, res: ApiResponse) => expectError(t, res, 404, 'NOT_FOUND', 'No such commission');

t.test('list: bad filters, limits and unknown parameters are INVALID_INPUT', async (t) => {
  invalid(t, await m.client.get('/api/v1/commissions?status=bogus'), [
    { path: 'status', message: 'must be one of: "pending", "approved", "paid", "voided"' },
  ]);
  invalid(t, await m.client.get('/api/v1/commissions?affiliate_id=seller'), [
    { path: 'affiliate_id', message: 'must match pattern "^aff_[0-9a-hjkmnp-tv-z]{26}$"' },
  ]);
  invalid(t, await m.client.get('/api/v1/commissions?limit=0'), [{ path: 'limit', message: 'must be >= 1' }]);
  invalid(t, await m.client.get('/api/v1/commissions?limit=101'), [{ path: 'limit', message: 'must be <= 100' }]);
  invalid(t, await m.client.get('/api/v1/commissions?limit=ten'), [{ path: 'limit', message: 'must be integer' }]);
  invalid(t, await m.client.get('/api/v1/commissions?order_id=x'), [
    { path: 'order_id', message: 'is not a known field' },
  ]);
});

t.test('list: a forged, altered or foreign cursor is INVALID_INPUT', async (t) => {
  const first = await m.client.get('/api/v1/commissions?limit=1');
  t.equal(first.status, 200);
  const cursor: string = first.body.next_cursor;
  t.type(cursor, 'string');
  t.equal((await m.client.get(`/api/v1/commissions?limit=1&cursor=${encodeURIComponent(cursor)}`)).status, 200);

  const cursorError = [{ path: 'cursor', message: 'is not a cursor issued for this list' }];
  const [payload, signature] = cursor.split('.');
  const forgedPayload = Buffer.from(JSON.stringify(['2999-01-01T00:00:00.000Z', 'com_x'])).toString('base64url');
  invalid(t, await m.client.get(`/api/v1/commissions?cursor=${forgedPayload}.${signature}`), cursorError);
  const flipped = signature!.startsWith('A') ? `B${signature!.slice(1)}` : `A${signature!.slice(1)}`;
  invalid(t, await m.client.get(`/api/v1/commissions?cursor=${payload}.${flipped}`), cursorError);
  invalid(t, await m.client.get('/api/v1/commissions?cursor=garbage'), cursorError);
  invalid(
    t,
    await m.client.get(`/api/v1/commissions?status=pending&cursor=${encodeURIComponent(cursor)}`),
    cursorError,
  );
  invalid(
    t,
    await m.client.get(`/api/v1/commissions?affiliate_id=${affiliate.id}&cursor=${encodeURIComponent(cursor)}`),
    cursorError,
  );
  // The affiliates list signs its cursors with the same key, but for another list.
  const affiliatesPage = await m.client.get('/api/v1/affiliates?limit=1');
  t.equal(affiliatesPage.status, 200);
  const other = await createAffiliate(m.client, { email: 'second@example.com' });
  t.ok(other.id);
  const affiliatesCursor = (await m.client.get('/api/v1/affiliates?limit=1')).body.next_cursor as string;
  invalid(t, await m.client.get(`/api/v1/commissions?cursor=${encodeURIComponent(affiliatesCursor)}`), cursorError);
});

t.test('update: moves outside pending→approved, pending/approved→voided are 409 CONFLICT', async (t) => {
  const refused = async (id: string | undefined, status: string, message: string) =>
    expectError(t, await m.client.patch(`/api/v1/commissions/${id}`, { status }), 409, 'CONFLICT', message);
  await refused(voidedId, 'approved', 'A voided commission cannot move to approved; voided is final');
  await refused(paidId, 'voided', 'A paid commission cannot move to voided; paid is final');
  await refused(paidId, 'approved', 'A paid commission cannot move to approved; paid is final');
  await refused(paidId, 'pending', 'A paid commission cannot move to pending; paid is final');
  // approved → paid belongs to payouts: a status of commissions, not a move a merchant makes by hand.
  await refused(
    pendingId,
    'paid',
    'A pending commission cannot move to paid; allowed moves from pending: approved, voided',
  );
  const unchanged = await m.client.get(`/api/v1/commissions/${paidId}`);
  t.equal(unchanged.body.status, 'paid');
  t.equal((await m.client.get(`/api/v1/commissions/${pendingId}`)).body.status, 'pending');
});

t.test('update: invalid bodies are INVALID_INPUT', async (t) => {
  const path = `/api/v1/commissions/${pendingId}`;
  // A status that is none of a commission's is the body's fault, whatever the commission's own status.
  invalid(t, await m.client.patch(path, { status: 'settled' }), [
    { path: 'status', message: 'must be one of: "pending", "approved", "paid", "voided"' },
  ]);
  invalid(t, await m.client.patch(path, {}), [{ path: 'status', message: 'is required' }]);
  invalid(t, await m.client.patch(path, { status: 'approved', void_reason: 'because' }), [
    { path: 'void_reason', message: 'is only accepted with status voided' },
  ]);
  invalid(t, await m.client.patch(path, { status: 'voided', void_reason: '' }), [
    { path: 'void_reason', message: 'must NOT have fewer than 1 characters' },
  ]);
  invalid(t, await m.client.patch(path, { status: 'voided', amount: 0 }), [
    { path: 'amount', message: 'is not a known field' },
  ]);
  const notJson = await m.client.request('PATCH', path, {
    raw: 'status=voided',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(notJson.status, 415);
  t.equal(notJson.body.error.code, 'INVALID_INPUT');
  t.equal((await m.client.get(path)).body.status, 'pending', 'nothing changed');
});

t.test('unknown and malformed commission ids are NOT_FOUND', async (t) => {
  notFound(t, await m.client.get(`/api/v1/commissions/${newId('com')}`));
  notFound(t, await m.client.get('/api/v1/commissions/com_nope'));
  notFound(t, await m.client.get(`/api/v1/commissions/${affiliate.id}`));
  notFound(t, await m.client.patch(`/api/v1/commissions/${newId('com')}`, { status: 'approved' }));
  const nul = await m.client.patch('/api/v1/commissions/%00', { status: 'approved' });
  t.equal(nul.status, 404);
  t.equal(nul.body.error.code, 'NOT_FOUND');
});

t.test('messages that can never be processed are set aside; the ones after them are processed', async (t) => {
  const js = jetstream(platform.nc);
  const subject = outboxSubject(platform.prefix, 'conversion.recorded');
  await js.publish(subject, Buffer.from('not json'), { msgID: newId('msg') });
  await js.publish(
    subject,
    Buffer.from(
      JSON.stringify({
        id: newId('msg'),
        type: 'conversion.recorded',
        merchant_id: m.id,
        created_at: new Date().toISOString(),
        data: { event_id: 'evt_x' },
      }),
    ),
    { msgID: newId('msg') },
  );
  await publishConversion(platform.nc, platform.prefix, m.id, conversion({ affiliate_id: affiliate.id, amount: '-5' }));
  await publishConversion(
    platform.nc,
    platform.prefix,
    m.id,
    conversion({ affiliate_id: affiliate.id, currency: 'usd' }),
  );
  await publishConversion(platform.nc, platform.prefix, newId('mer'), conversion({ affiliate_id: affiliate.id }));
  const good = conversion({ affiliate_id: affiliate.id, amount: '7.00' });
  await publishConversion(platform.nc, platform.prefix, m.id, good);
  await awaitProcessed(platform.sql, m.id, [good.event_id]);
  t.same(
    (await commissionsOfEvent(platform.sql, m.id, good.event_id)).map((c) => c.amount),
    ['0.7000'],
  );
  const terminated = logs.filter((l) => l.includes('conversion message terminated')).map((l) => JSON.parse(l).reason);
  t.same(terminated, [
    'not JSON',
    'data does not match conversion.recorded at /event_type',
    'data.amount is not a non-negative decimal',
    'data.currency is not an ISO 4217 code',
    'unknown merchant',
  ]);
  t.notOk(
    logs.some((l) => l.includes('"level":"error"')),
    'no processing errors',
  );
});

const admin = (...args: string[]) => runAdmin(platform.databaseUrl, ...args);

t.test('operator CLI: programme settings and tiers are validated before they are stored', async (t) => {
  const shop = await platform.merchant();
  const ok = await admin(
    'merchant',
    'settings',
    shop.id,
    '--set',
    'default_rate=0.15',
    '--set',
    'level_rates=[0.1,0.05]',
    '--set',
    'commission_rules.signup={"kind":"flat","amount":"5.00"}',
  );
  t.equal(ok.code, 0, ok.stderr);
  const printed = JSON.parse(ok.stdout);
  t.equal(printed.id, shop.id);
  t.same(
    [
      printed.settings.default_rate,
      printed.settings.level_rates,
      printed.settings.commission_rules,
      printed.settings.hold_days,
    ],
    [0.15, [0.1, 0.05], { signup: { kind: 'flat', amount: '5.00' } }, 30],
  );

  const refused: [string[], string][] = [
    [['--set', 'default_rate=1.5'], 'admin: default_rate: Expected number to be less or equal to 1\n'],
    [['--set', 'hold_days=-1'], 'admin: hold_days: Expected integer to be greater or equal to 0\n'],
    [
      ['--set', 'level_rates=[0.1,0.1,0.1,0.1,0.1,0.1]'],
      'admin: level_rates: Expected array length to be less or equal to 5\n',
    ],
    [['--set', 'fraud_action=ignore'], 'admin: fraud_action: Expected union value\n'],
    [
      ['--set', 'vip=true'],
      `admin: unknown setting vip (keys: default_rate, hold_days, currency, attribution_window_days, level_rates, landing_url, tracking_host, commission_rules, fraud_action, fraud_max_conversions_per_hour, min_payout, payout_day, tax_form_policy)\n`,
    ],
    [['--set', 'nonsense'], 'admin: --set expects key=value, got "nonsense"\n'],
    [
      ['--set', 'commission_rules.signup={"kind":"flat","amount":"5.123456"}'],
      'admin: commission_rules.signup: must be {"kind":"percentage","rate":0..1} or {"kind":"flat","amount":"12.50"} or null\n',
    ],
    [['--set', 'commission_rules.Sign Up=null'], 'admin: commission_rules: "Sign Up" is not an event type\n'],
  ];
  // Each refusal through the function the CLI calls; one through the CLI itself (exit 2, the message on stderr).
  for (const [args, stderr] of refused) {
    const error = await setMerchantSettings(platform.sql, shop.id, [args[1]!]).then(
      () => null,
      (e: Error) => e,
    );
    t.ok(error instanceof UsageError, args.join(' '));
    t.equal(`admin: ${error?.message}\n`, stderr);
  }
  const run = await admin('merchant', 'settings', shop.id, ...refused[0]![0]);
  t.same([run.code, run.stderr, run.stdout], [2, refused[0]![1], '']);
  const [stored] = await platform.sql`select settings from merchants where id = ${shop.id}`;
  t.same(
    stored!['settings'],
    { default_rate: 0.15, level_rates: [0.1, 0.05], commission_rules: { signup: { kind: 'flat', amount: '5.00' } } },
    'refusals stored nothing',
  );

  const removed = await admin('merchant', 'settings', shop.id, '--set', 'commission_rules.signup=null');
  t.same(JSON.parse(removed.stdout).settings.commission_rules, {});

  const tier = await admin('tier', 'create', shop.id, '--name', 'Silver', '--rate', '0.15', '--threshold', '1000');
  t.equal(tier.code, 0, tier.stderr);
  t.match(JSON.parse(tier.stdout), {
    id: /^tier_/,
    merchant_id: shop.id,
    name: 'Silver',
    rate: '0.150000',
    threshold: '1000.0000',
  });
  const tierError = (input: { name: string; rate: string; threshold: string }, merchantId = shop.id) =>
    createTier(platform.sql, merchantId, input).then(
      () => '',
      (e: Error) => (e instanceof UsageError ? e.message : `unexpected: ${e.message}`),
    );
  t.equal(
    await tierError({ name: 'Gold', rate: '1.5', threshold: '5000' }),
    '--rate must be a decimal from 0 to 1 with at most 6 decimals (0.15 is 15 percent)',
  );
  t.equal(
    await tierError({ name: 'Gold', rate: '0.2', threshold: '-5' }),
    "--threshold must be a non-negative decimal with at most 4 decimals, in the merchant's currency",
  );
  t.equal(await tierError({ name: ' ', rate: '0.2', threshold: '5' }), '--name must have 1 to 100 characters');
  t.equal(await tierError({ name: 'Gold', rate: '0.2', threshold: '5' }, 'mer_nope'), 'no merchant mer_nope');
  const list = await admin('tier', 'list', shop.id);
  t.same(
    JSON.parse(list.stdout).map((x: { name: string }) => x.name),
    ['Silver'],
  );
});
