import t from 'tap';
import { startPlatform } from '../helpers/platform.ts';
import { expectError } from '../helpers/errors.ts';
import {
  awaitProcessed,
  awaitStreamEvents,
  commissionsOfEvent,
  conversion,
  createAffiliate,
  DAY_MS,
  publishConversion,
  recordConversions,
  setMerchantSettings,
  startCommissions,
  testClock,
} from '../helpers/commissions.ts';

const platform = await startPlatform(t);
const clock = testClock();
const { service, logs } = await startCommissions(t, platform, { now: clock.now });

const SECRET_FINGERPRINT = 'fp_7c1d0e5b9a-very-identifying';

t.test("another merchant's commissions: 404 and never listed", async (t) => {
  const a = await platform.merchant();
  const b = await platform.merchant();
  const aSeller = await createAffiliate(a.client, { email: 'a-seller@example.com' });
  const bSeller = await createAffiliate(b.client, { email: 'b-seller@example.com' });
  const aSale = conversion({ affiliate_id: aSeller.id, amount: '50.00' });
  const bSale = conversion({ affiliate_id: bSeller.id, amount: '50.00' });
  await recordConversions(platform.sql, a.id, [aSale]);
  await recordConversions(platform.sql, b.id, [bSale]);
  await awaitProcessed(platform.sql, a.id, [aSale.event_id]);
  await awaitProcessed(platform.sql, b.id, [bSale.event_id]);
  const [aCommission] = await commissionsOfEvent(platform.sql, a.id, aSale.event_id);

  expectError(t, await b.client.get(`/api/v1/commissions/${aCommission!.id}`), 404, 'NOT_FOUND', 'No such commission');
  expectError(
    t,
    await b.client.patch(`/api/v1/commissions/${aCommission!.id}`, { status: 'voided' }),
    404,
    'NOT_FOUND',
    'No such commission',
  );
  t.equal((await a.client.get(`/api/v1/commissions/${aCommission!.id}`)).body.status, 'pending', 'untouched');

  const bList = await b.client.get('/api/v1/commissions');
  t.equal(bList.status, 200);
  t.same(
    bList.body.data.map((c: any) => c.event_id),
    [bSale.event_id],
  );
  const byForeignAffiliate = await b.client.get(`/api/v1/commissions?affiliate_id=${aSeller.id}`);
  t.equal(byForeignAffiliate.status, 200);
  t.same(byForeignAffiliate.body, { data: [], next_cursor: null });

  // A cursor is bound to the merchant that was given it.
  const more = conversion({ affiliate_id: aSeller.id, amount: '5.00' });
  await recordConversions(platform.sql, a.id, [more]);
  await awaitProcessed(platform.sql, a.id, [more.event_id]);
  const aPage = await a.client.get('/api/v1/commissions?limit=1');
  t.type(aPage.body.next_cursor, 'string');
  const stolen = await b.client.get(`/api/v1/commissions?limit=1&cursor=${encodeURIComponent(aPage.body.next_cursor)}`);
  t.equal(stolen.status, 400);
  t.same(stolen.body, {
    error: {
      code: 'INVALID_INPUT',
      message: 'The request is invalid',
      request_id: stolen.headers.get('x-request-id'),
      details: [{ path: 'cursor', message: 'is not a cursor issued for this list' }],
    },
  });

  // An event claiming another merchant's affiliate earns nothing: affiliates are looked up within the merchant.
  const crossed = conversion({ affiliate_id: aSeller.id, amount: '50.00' });
  await publishConversion(platform.nc, platform.prefix, b.id, crossed);
  await awaitProcessed(platform.sql, b.id, [crossed.event_id]);
  t.same(await commissionsOfEvent(platform.sql, b.id, crossed.event_id), []);
  const [count] = await platform.sql`select count(*)::int as n from commissions where affiliate_id = ${aSeller.id}`;
  t.equal(count!['n'], 2);
});

t.test('scopes: write cannot read commissions, read cannot change them', async (t) => {
  const m = await platform.merchant();
  const seller = await createAffiliate(m.client, { email: 'scoped@example.com' });
  const sale = conversion({ affiliate_id: seller.id });
  await recordConversions(platform.sql, m.id, [sale]);
  await awaitProcessed(platform.sql, m.id, [sale.event_id]);
  const [commission] = await commissionsOfEvent(platform.sql, m.id, sale.event_id);

  const writeOnly = await platform.merchant({ scopes: 'write' });
  const writer = platform.client(writeOnly.key);
  expectError(t, await writer.get('/api/v1/commissions'), 403, 'FORBIDDEN', 'This key lacks the read scope');
  expectError(
    t,
    await writer.get(`/api/v1/commissions/${commission!.id}`),
    403,
    'FORBIDDEN',
    'This key lacks the read scope',
  );

  const readOnlyKey = await import('../../scripts/admin/commands.ts').then((c) =>
    c.createKey(platform.sql, m.id, 'read'),
  );
  const reader = platform.client(readOnlyKey.key);
  expectError(
    t,
    await reader.patch(`/api/v1/commissions/${commission!.id}`, { status: 'approved' }),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
  t.equal((await reader.get(`/api/v1/commissions/${commission!.id}`)).body.status, 'pending');

  const anonymous = platform.client();
  const res = await anonymous.get('/api/v1/commissions');
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'UNAUTHORIZED');
});

t.test('self-referral with fraud_action hold: flagged, held pending, never auto-approved', async (t) => {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['hold_days=1', 'level_rates=[0.5]']);
  const parent = await createAffiliate(m.client, { email: 'upline@example.com' });
  const self = await createAffiliate(m.client, { email: 'Self.Buyer@Example.com', parent_email: 'upline@example.com' });
  const sale = conversion({ affiliate_id: self.id, amount: '60.00', customer_email: 'self.buyer@example.COM' });
  const clean = conversion({ affiliate_id: self.id, amount: '60.00', customer_email: 'someone.else@example.com' });
  await recordConversions(platform.sql, m.id, [sale, clean]);
  await awaitProcessed(platform.sql, m.id, [sale.event_id, clean.event_id]);

  const flagged = await awaitStreamEvents<any>(platform, 'fraud.flagged', (e) => e.merchant_id === m.id, 1);
  t.equal(flagged.length, 1);
  t.same(flagged[0]!.data, {
    affiliate_id: self.id,
    event_id: sale.event_id,
    rule: 'self_referral',
    details: { matched: 'customer_email' },
  });
  const held = await commissionsOfEvent(platform.sql, m.id, sale.event_id);
  t.same(
    held.map((c) => [c.level, c.affiliate_id, c.status, c.held]),
    [
      [0, self.id, 'pending', true],
      [1, parent.id, 'pending', true],
    ],
  );
  const [flagRow] =
    await platform.sql`select rule, affiliate_id, event_id, details from fraud_flags where merchant_id = ${m.id}`;
  t.same(flagRow, {
    rule: 'self_referral',
    affiliate_id: self.id,
    event_id: sale.event_id,
    details: { matched: 'customer_email' },
  });

  clock.advance(400 * DAY_MS);
  await service.approveEndedHolds();
  t.same(
    (await commissionsOfEvent(platform.sql, m.id, sale.event_id)).map((c) => c.status),
    ['pending', 'pending'],
    'held: never auto-approved',
  );
  t.same(
    (await commissionsOfEvent(platform.sql, m.id, clean.event_id)).map((c) => c.status),
    ['approved', 'approved'],
    'the clean sale is',
  );
  // The merchant may release a held commission by hand after review.
  const released = await m.client.patch(`/api/v1/commissions/${held[0]!.id}`, { status: 'approved' });
  t.equal(released.status, 200);
  t.equal(released.body.status, 'approved');
  // A flagged conversion does not count toward tiers.
  const [stats] =
    await platform.sql`select attributed_revenue::text from affiliate_stats where merchant_id = ${m.id} and affiliate_id = ${self.id}`;
  t.equal(stats!['attributed_revenue'], '60.00');
});

t.test(
  'self-referral with fraud_action void: commission voided (fraud), commission.voided and fraud.flagged',
  async (t) => {
    const m = await platform.merchant();
    await setMerchantSettings(platform.sql, m.id, ['fraud_action=void']);
    const self = await createAffiliate(m.client, { email: 'voidme@example.com' });
    const sale = conversion({ affiliate_id: self.id, amount: '60.00', customer_email: 'VOIDME@example.com' });
    await recordConversions(platform.sql, m.id, [sale]);
    await awaitProcessed(platform.sql, m.id, [sale.event_id]);
    const [commission] = await commissionsOfEvent(platform.sql, m.id, sale.event_id);
    t.same([commission!.status, commission!.void_reason, commission!.held], ['voided', 'fraud', false]);

    const got = await m.client.get(`/api/v1/commissions/${commission!.id}`);
    t.equal(got.body.void_reason, 'fraud');
    t.equal(got.body.voided_at, clock.now().toISOString());
    const created = await awaitStreamEvents<any>(
      platform,
      'commission.created',
      (e) => e.data.commission_id === commission!.id,
      1,
    );
    t.equal(created[0]!.data.status, 'pending');
    const voided = await awaitStreamEvents<any>(
      platform,
      'commission.voided',
      (e) => e.data.commission_id === commission!.id,
      1,
    );
    t.equal(voided[0]!.data.status, 'voided');
    const flagged = await awaitStreamEvents<any>(platform, 'fraud.flagged', (e) => e.merchant_id === m.id, 1);
    t.same(flagged[0]!.data, {
      affiliate_id: self.id,
      event_id: sale.event_id,
      rule: 'self_referral',
      details: { matched: 'customer_email' },
    });
  },
);

t.test("the affiliate's own visitor fingerprint is flagged, without revealing it", async (t) => {
  const m = await platform.merchant();
  const a = await createAffiliate(m.client, { email: 'fingers@example.com' });
  await platform.sql`update affiliates set fingerprint_visitor_ids = ${[SECRET_FINGERPRINT]} where id = ${a.id}`;
  const sale = conversion({
    affiliate_id: a.id,
    visit: { id: 'vis_01jd3t6m0s2e4w5x6y7z8a9b0c', ip_hash: null, fingerprint: SECRET_FINGERPRINT },
  });
  const other = conversion({
    affiliate_id: a.id,
    visit: { id: 'vis_01jd3t6m0s2e4w5x6y7z8a9b0d', ip_hash: null, fingerprint: 'fp_someone_else' },
  });
  await recordConversions(platform.sql, m.id, [sale, other]);
  await awaitProcessed(platform.sql, m.id, [sale.event_id, other.event_id]);
  const flagged = await awaitStreamEvents<any>(platform, 'fraud.flagged', (e) => e.merchant_id === m.id, 1);
  t.same(
    flagged.map((e) => e.data),
    [
      {
        affiliate_id: a.id,
        event_id: sale.event_id,
        rule: 'own_fingerprint',
        details: { matched: 'visit_fingerprint', visit_id: 'vis_01jd3t6m0s2e4w5x6y7z8a9b0c' },
      },
    ],
  );
  t.equal((await commissionsOfEvent(platform.sql, m.id, sale.event_id))[0]!.held, true);
  t.equal((await commissionsOfEvent(platform.sql, m.id, other.event_id))[0]!.held, false);
});

t.test('too many conversions from one visit or one IP in an hour are flagged (conversion_velocity)', async (t) => {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['fraud_max_conversions_per_hour=3']);
  const a = await createAffiliate(m.client, { email: 'fast@example.com' });
  const start = Date.now();
  const at = (i: number) => new Date(start + i * 1000).toISOString();
  // Five from one visit (and no IP), at once: processed concurrently, yet exactly two exceed the limit.
  const sameVisit = Array.from({ length: 5 }, (_, i) =>
    conversion({
      affiliate_id: a.id,
      created_at: at(i),
      visit: { id: 'vis_01jd3t6m0s2e4w5x6y7z8a9b0e', ip_hash: null, fingerprint: null },
    }),
  );
  // Five from distinct visits behind one IP hash.
  const sameIp = Array.from({ length: 5 }, (_, i) =>
    conversion({
      affiliate_id: a.id,
      created_at: at(i),
      visit: { id: `vis_01jd3t6m0s2e4w5x6y7z8a9c${i}`, ip_hash: 'iphash_shared', fingerprint: null },
    }),
  );
  // Four from one visit spread over more than an hour: never more than three in any hour.
  const slow = Array.from({ length: 4 }, (_, i) =>
    conversion({
      affiliate_id: a.id,
      created_at: new Date(start + i * 1_300_000).toISOString(),
      visit: { id: 'vis_01jd3t6m0s2e4w5x6y7z8a9b0f', ip_hash: null, fingerprint: null },
    }),
  );
  await recordConversions(platform.sql, m.id, [...sameVisit, ...sameIp, ...slow]);
  await awaitProcessed(
    platform.sql,
    m.id,
    [...sameVisit, ...sameIp, ...slow].map((c) => c.event_id),
  );
  const flags = await platform.sql<{ event_id: string; details: Record<string, unknown> }[]>`
    select event_id, details from fraud_flags where merchant_id = ${m.id} and rule = 'conversion_velocity'`;
  const visitFlags = flags.filter((f) => sameVisit.some((c) => c.event_id === f.event_id));
  const ipFlags = flags.filter((f) => sameIp.some((c) => c.event_id === f.event_id));
  t.equal(flags.length, 4);
  t.same(
    visitFlags.map((f) => f.details.source),
    ['visit', 'visit'],
  );
  t.same(visitFlags.map((f) => f.details.conversions_in_one_hour).sort(), [4, 5]);
  t.same(
    ipFlags.map((f) => f.details.source),
    ['ip', 'ip'],
  );
  t.notOk(JSON.stringify(flags).includes('iphash_shared'), 'the IP hash is not repeated in the details');
  const events = await awaitStreamEvents<any>(platform, 'fraud.flagged', (e) => e.merchant_id === m.id, 4);
  t.same(
    events.map((e) => e.data.rule),
    Array(4).fill('conversion_velocity'),
  );
});

t.test('nothing identifying reaches the logs', async (t) => {
  const everything = [...logs, ...platform.logs].join('\n');
  t.ok(logs.length > 0);
  for (const secret of [
    SECRET_FINGERPRINT,
    'self.buyer@example.com',
    'Self.Buyer@Example.com',
    'VOIDME@example.com',
    'iphash_shared',
  ]) {
    t.notOk(everything.toLowerCase().includes(secret.toLowerCase()), `no ${secret} in logs`);
  }
});
