import t from 'tap';
import { sleep, startPlatform } from '../helpers/platform.ts';
import {
  awaitProcessed,
  awaitStreamEvents,
  commissionsOfEvent,
  conversion,
  createAffiliate,
  createTier,
  DAY_MS,
  recordConversions,
  setMerchantSettings,
  startCommissions,
  streamEvents,
  testClock,
} from '../helpers/commissions.ts';

const platform = await startPlatform(t);
const clock = testClock();
const { service } = await startCommissions(t, platform, { now: clock.now });

const AFFILIATE_FIELDS = [
  'id',
  'slug',
  'email',
  'display_name',
  'status',
  'tier_id',
  'parent_id',
  'lifetime_commissions_paid',
  'custom_commission_rate',
  'referral_url',
  'created_at',
  'updated_at',
].sort();

t.test('a three-level lineage earns at levels 0, 1 and 2 at the merchant level rates', async (t) => {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1', 'level_rates=[0.1,0.05]']);
  const grandparent = await createAffiliate(m.client, { email: 'grand@example.com' });
  const parent = await createAffiliate(m.client, { email: 'parent@example.com', parent_email: 'grand@example.com' });
  const child = await createAffiliate(m.client, { email: 'child@example.com', parent_email: 'parent@example.com' });

  const c = conversion({ affiliate_id: child.id, amount: '250.00', external_id: 'order_3lvl' });
  await recordConversions(platform.sql, m.id, [c]);
  await awaitProcessed(platform.sql, m.id, [c.event_id]);

  const list = await m.client.get('/api/v1/commissions');
  t.equal(list.status, 200);
  t.equal(list.body.next_cursor, null);
  const byLevel = [...list.body.data].sort((a: { level: number }, b: { level: number }) => a.level - b.level);
  t.same(
    byLevel.map((x: any) => [x.level, x.affiliate_id, x.amount, x.rate, x.currency, x.status, x.order_id, x.event_id]),
    [
      [0, child.id, 25, 0.1, 'USD', 'pending', 'order_3lvl', c.event_id],
      [1, parent.id, 2.5, 0.1, 'USD', 'pending', 'order_3lvl', c.event_id],
      [2, grandparent.id, 1.25, 0.05, 'USD', 'pending', 'order_3lvl', c.event_id],
    ],
  );
  const direct = byLevel[0];
  t.same(Object.keys(direct).sort(), [
    'affiliate_id',
    'amount',
    'approved_at',
    'clawback',
    'created_at',
    'currency',
    'event_id',
    'id',
    'level',
    'order_id',
    'rate',
    'status',
    'void_reason',
    'void_requested_at',
    'voided_at',
  ]);
  t.equal(direct.created_at, clock.now().toISOString());
  t.equal(direct.approved_at, null);
  t.equal(direct.voided_at, null);
  t.equal(direct.void_reason, null);

  const one = await m.client.get(`/api/v1/commissions/${direct.id}`);
  t.equal(one.status, 200);
  t.same(one.body, direct);

  const created = await awaitStreamEvents<any>(
    platform,
    'commission.created',
    (e) => e.data.event_id === c.event_id,
    3,
  );
  t.equal(created.length, 3);
  t.same(
    created.map((e) => e.data).sort((a, b) => a.level - b.level),
    byLevel.map((x: any) => ({
      commission_id: x.id,
      affiliate_id: x.affiliate_id,
      amount: x.amount,
      currency: 'USD',
      status: 'pending',
      order_id: 'order_3lvl',
      event_id: c.event_id,
      level: x.level,
    })),
  );
  for (const e of created) {
    t.equal(e.type, 'commission.created');
    t.equal(e.merchant_id, m.id);
    t.match(e.id, /^msg_/);
  }
});

t.test('rules: flat and percentage per event type, rate precedence, nothing without amount or affiliate', async (t) => {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, [
    'default_rate=0.1',
    'commission_rules.signup={"kind":"flat","amount":"5.00"}',
    'commission_rules.renewal={"kind":"percentage","rate":0.02}',
  ]);
  const tier = await createTier(platform.sql, m.id, { name: 'Gold', rate: '0.3', threshold: '1000000' });
  const plain = await createAffiliate(m.client, { email: 'plain@example.com' });
  const custom = await createAffiliate(m.client, { email: 'custom@example.com', custom_commission_rate: 0.25 });
  const tiered = await createAffiliate(m.client, { email: 'tiered@example.com' });
  t.equal((await m.client.patch(`/api/v1/affiliates/${tiered.id}`, { tier_id: tier!['id'] })).status, 200);
  const customAndTier = await createAffiliate(m.client, { email: 'both@example.com', custom_commission_rate: 0.2 });
  t.equal((await m.client.patch(`/api/v1/affiliates/${customAndTier.id}`, { tier_id: tier!['id'] })).status, 200);

  const events = {
    defaultRate: conversion({ affiliate_id: plain.id, amount: '80.00' }),
    customRate: conversion({ affiliate_id: custom.id, amount: '80.00' }),
    tierRate: conversion({ affiliate_id: tiered.id, amount: '80.00' }),
    customBeatsTier: conversion({ affiliate_id: customAndTier.id, amount: '80.00' }),
    flatSignup: conversion({ affiliate_id: plain.id, event_type: 'signup', amount: '0' }),
    ruleBeatsCustom: conversion({ affiliate_id: custom.id, event_type: 'renewal', amount: '80.00' }),
    zeroAmount: conversion({ affiliate_id: plain.id, event_type: 'trial_started', amount: '0' }),
    unattributed: conversion({ affiliate_id: null, amount: '80.00' }),
  };
  await recordConversions(platform.sql, m.id, Object.values(events));
  await awaitProcessed(
    platform.sql,
    m.id,
    Object.values(events).map((e) => e.event_id),
  );

  const direct = async (e: { event_id: string }) =>
    (await commissionsOfEvent(platform.sql, m.id, e.event_id)).map((c) => [c.level, c.amount, c.rate]);
  t.same(await direct(events.defaultRate), [[0, '8.0000', '0.1']]);
  t.same(await direct(events.customRate), [[0, '20.0000', '0.25']]);
  t.same(await direct(events.tierRate), [[0, '24.0000', '0.3']]);
  t.same(await direct(events.customBeatsTier), [[0, '16.0000', '0.2']]);
  t.same(await direct(events.flatSignup), [[0, '5.0000', null]]);
  t.same(await direct(events.ruleBeatsCustom), [[0, '1.6000', '0.02']]);
  t.same(await direct(events.zeroAmount), []);
  t.same(await direct(events.unattributed), []);
});

t.test('suspended affiliates earn nothing; a suspended ancestor is skipped, the level above still earns', async (t) => {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1', 'level_rates=[0.5,0.25]']);
  const top = await createAffiliate(m.client, { email: 'top@example.com' });
  const middle = await createAffiliate(m.client, { email: 'middle@example.com', parent_email: 'top@example.com' });
  const bottom = await createAffiliate(m.client, { email: 'bottom@example.com', parent_email: 'middle@example.com' });
  t.equal((await m.client.patch(`/api/v1/affiliates/${middle.id}`, { status: 'suspended' })).status, 200);

  const viaBottom = conversion({ affiliate_id: bottom.id, amount: '100.00' });
  const viaMiddle = conversion({ affiliate_id: middle.id, amount: '100.00' });
  await recordConversions(platform.sql, m.id, [viaBottom, viaMiddle]);
  await awaitProcessed(platform.sql, m.id, [viaBottom.event_id, viaMiddle.event_id]);

  t.same(
    (await commissionsOfEvent(platform.sql, m.id, viaBottom.event_id)).map((c) => [c.level, c.affiliate_id, c.amount]),
    [
      [0, bottom.id, '10.0000'],
      [2, top.id, '2.5000'],
    ],
  );
  t.same(await commissionsOfEvent(platform.sql, m.id, viaMiddle.event_id), []);
});

t.test(
  'a refund voids the order commissions, pending and approved, with commission.voided on the stream',
  async (t) => {
    const m = await platform.merchant();
    await setMerchantSettings(platform.sql, m.id, ['level_rates=[0.1]']);
    await createAffiliate(m.client, { email: 'lead@example.com' });
    const seller = await createAffiliate(m.client, { email: 'seller@example.com', parent_email: 'lead@example.com' });
    const order = conversion({ affiliate_id: seller.id, amount: '40.00', external_id: 'order_refund_me' });
    const otherOrder = conversion({ affiliate_id: seller.id, amount: '40.00', external_id: 'order_keep_me' });
    await recordConversions(platform.sql, m.id, [order, otherOrder]);
    await awaitProcessed(platform.sql, m.id, [order.event_id, otherOrder.event_id]);
    const [direct, parentLevel] = await commissionsOfEvent(platform.sql, m.id, order.event_id);
    const approve = await m.client.patch(`/api/v1/commissions/${direct!.id}`, { status: 'approved' });
    t.equal(approve.status, 200);
    t.equal(approve.body.status, 'approved');

    const refund = conversion({
      affiliate_id: null,
      event_type: 'refund',
      amount: '40.00',
      external_id: 'order_refund_me',
    });
    await recordConversions(platform.sql, m.id, [refund]);
    const voided = await awaitStreamEvents<any>(platform, 'commission.voided', (e) => e.merchant_id === m.id, 2);
    t.same(
      voided.map((e) => [e.data.commission_id, e.data.status, e.data.order_id, e.data.amount]).sort(),
      [
        [direct!.id, 'voided', 'order_refund_me', 4],
        [parentLevel!.id, 'voided', 'order_refund_me', 0.4],
      ].sort(),
    );

    const list = await m.client.get('/api/v1/commissions?status=voided');
    t.equal(list.status, 200);
    t.same(list.body.data.map((c: any) => c.id).sort(), [direct!.id, parentLevel!.id].sort());
    for (const c of list.body.data) {
      t.equal(c.void_reason, 'refund');
      t.equal(c.voided_at, clock.now().toISOString());
    }
    t.equal((await commissionsOfEvent(platform.sql, m.id, otherOrder.event_id))[0]!.status, 'pending');
    // The refunded order's revenue no longer counts toward tiers.
    const [stats] =
      await platform.sql`select attributed_revenue::text, conversions from affiliate_stats where merchant_id = ${m.id} and affiliate_id = ${seller.id}`;
    t.same(stats, { attributed_revenue: '40.00', conversions: 1 });

    // A refund processed before its order (redelivery can reorder them): the order's commissions are born voided.
    const early = conversion({
      affiliate_id: null,
      event_type: 'refund',
      external_id: 'order_refunded_first',
      amount: '10.00',
    });
    await recordConversions(platform.sql, m.id, [early]);
    await awaitProcessed(platform.sql, m.id, [early.event_id]);
    const late = conversion({ affiliate_id: seller.id, external_id: 'order_refunded_first', amount: '10.00' });
    await recordConversions(platform.sql, m.id, [late]);
    await awaitProcessed(platform.sql, m.id, [late.event_id]);
    t.same(
      (await commissionsOfEvent(platform.sql, m.id, late.event_id)).map((c) => [c.level, c.status, c.void_reason]),
      [
        [0, 'voided', 'refund'],
        [1, 'voided', 'refund'],
      ],
    );
    const [after] =
      await platform.sql`select attributed_revenue::text, conversions from affiliate_stats where merchant_id = ${m.id} and affiliate_id = ${seller.id}`;
    t.same(after, { attributed_revenue: '40.00', conversions: 1 }, 'a refunded order never counts');
  },
);

t.test('crossing a tier threshold promotes once, with affiliate.tier_promoted', async (t) => {
  const m = await platform.merchant();
  const silver = await createTier(platform.sql, m.id, { name: 'Silver', rate: '0.15', threshold: '100' });
  const gold = await createTier(platform.sql, m.id, { name: 'Gold', rate: '0.2', threshold: '1000' });
  const a = await createAffiliate(m.client, { email: 'climber@example.com' });

  const send = async (amount: string, currency = 'USD') => {
    const c = conversion({ affiliate_id: a.id, amount, currency });
    await recordConversions(platform.sql, m.id, [c]);
    await awaitProcessed(platform.sql, m.id, [c.event_id]);
    return (await commissionsOfEvent(platform.sql, m.id, c.event_id)).map((x) => [x.amount, x.rate]);
  };
  t.same(await send('60.00'), [['6.0000', '0.1']]);
  // Crosses 100: this conversion is still paid at the old rate, the promotion applies from the next one.
  t.same(await send('50.00'), [['5.0000', '0.1']]);
  t.same(await send('20.00'), [['3.0000', '0.15']]);
  // Revenue in another currency than the merchant's (USD) is kept apart and does not reach Gold.
  t.same(await send('5000.00', 'EUR'), [['750.0000', '0.15']]);
  t.equal((await m.client.get(`/api/v1/affiliates/${a.id}`)).body.tier_id, silver!['id']);
  t.same(await send('900.00'), [['135.0000', '0.15']]);

  const promotions = await awaitStreamEvents<any>(platform, 'affiliate.tier_promoted', (e) => e.data.id === a.id, 2);
  await sleep(300);
  const all = (await streamEvents<any>(platform.nc, platform.prefix, 'affiliate.tier_promoted')).filter(
    (e) => e.data.id === a.id,
  );
  t.equal(all.length, 2, 'one promotion per threshold crossed');
  t.same(
    promotions.map((e) => [e.data.previous_tier_id, e.data.tier_id]),
    [
      [null, silver!['id']],
      [silver!['id'], gold!['id']],
    ],
  );
  t.same(Object.keys(promotions[0]!.data).sort(), [...AFFILIATE_FIELDS, 'previous_tier_id'].sort());
  t.equal(promotions[0]!.data.email, 'climber@example.com');
  const got = await m.client.get(`/api/v1/affiliates/${a.id}`);
  t.equal(got.body.tier_id, gold!['id']);
  const [usd] =
    await platform.sql`select attributed_revenue::text from affiliate_stats where merchant_id = ${m.id} and affiliate_id = ${a.id} and currency = 'USD'`;
  t.equal(usd!['attributed_revenue'], '1030.00');
});

t.test('approve and void by hand, list filters and cursor paging', async (t) => {
  const m = await platform.merchant();
  const x = await createAffiliate(m.client, { email: 'x@example.com' });
  const y = await createAffiliate(m.client, { email: 'y@example.com' });
  const conversions = [
    ...Array.from({ length: 4 }, () => conversion({ affiliate_id: x.id, amount: '10.00' })),
    ...Array.from({ length: 3 }, () => conversion({ affiliate_id: y.id, amount: '10.00' })),
  ];
  for (const c of conversions) {
    clock.advance(1000); // distinct created_at, so the expected order is known
    await recordConversions(platform.sql, m.id, [c]);
    await awaitProcessed(platform.sql, m.id, [c.event_id]);
  }
  const all = await m.client.get('/api/v1/commissions?limit=100');
  t.equal(all.body.data.length, 7);
  const expectedOrder = [...conversions].reverse().map((c) => c.event_id);
  t.same(
    all.body.data.map((c: any) => c.event_id),
    expectedOrder,
    'newest first',
  );

  const pages: string[] = [];
  let cursor: string | null = null;
  let calls = 0;
  do {
    const res: any = await m.client.get(
      `/api/v1/commissions?affiliate_id=${x.id}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    t.equal(res.status, 200);
    pages.push(...res.body.data.map((c: any) => c.event_id));
    cursor = res.body.next_cursor;
    calls++;
  } while (cursor);
  t.equal(calls, 2);
  t.same(
    pages,
    expectedOrder.filter((id) => conversions.find((c) => c.event_id === id)!.affiliate_id === x.id),
  );

  const [first, second] = all.body.data;
  const approved = await m.client.patch(`/api/v1/commissions/${first.id}`, { status: 'approved' });
  t.equal(approved.status, 200);
  t.same(approved.body, { ...first, status: 'approved', approved_at: clock.now().toISOString() });
  const again = await m.client.patch(`/api/v1/commissions/${first.id}`, { status: 'approved' });
  t.equal(again.status, 200, 'asking for the status it has changes nothing');
  t.same(again.body, approved.body);
  const voided = await m.client.patch(`/api/v1/commissions/${second.id}`, {
    status: 'voided',
    void_reason: 'order cancelled',
  });
  t.equal(voided.status, 200);
  t.same(voided.body, {
    ...second,
    status: 'voided',
    voided_at: clock.now().toISOString(),
    void_reason: 'order cancelled',
  });
  const voidedApproved = await m.client.patch(`/api/v1/commissions/${first.id}`, { status: 'voided' });
  t.equal(voidedApproved.status, 200);
  t.equal(voidedApproved.body.void_reason, 'manual');

  t.same(
    (await m.client.get('/api/v1/commissions?status=voided')).body.data.map((c: any) => c.id),
    [first.id, second.id],
  );
  t.equal((await m.client.get('/api/v1/commissions?status=approved')).body.data.length, 0);
  t.equal((await m.client.get(`/api/v1/commissions?status=pending&affiliate_id=${y.id}`)).body.data.length, 1);

  const approvedEvents = await awaitStreamEvents<any>(
    platform,
    'commission.approved',
    (e) => e.data.commission_id === first.id,
    1,
  );
  t.same(approvedEvents[0]!.data, {
    commission_id: first.id,
    affiliate_id: first.affiliate_id,
    amount: 1,
    currency: 'USD',
    status: 'approved',
    order_id: first.order_id,
    event_id: first.event_id,
    level: 0,
  });
  const voidedEvents = await awaitStreamEvents<any>(platform, 'commission.voided', (e) => e.merchant_id === m.id, 2);
  t.same(
    voidedEvents.map((e) => e.data.commission_id),
    [second.id, first.id],
  );
});

t.test('the hold period approves pending commissions when it ends', async (t) => {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['hold_days=7']);
  const a = await createAffiliate(m.client, { email: 'patient@example.com' });
  const c = conversion({ affiliate_id: a.id, amount: '30.00' });
  await recordConversions(platform.sql, m.id, [c]);
  await awaitProcessed(platform.sql, m.id, [c.event_id]);
  const [commission] = await commissionsOfEvent(platform.sql, m.id, c.event_id);
  const createdAt = clock.now().getTime();

  clock.set(new Date(createdAt + 7 * DAY_MS - 1));
  await service.approveEndedHolds();
  t.equal(
    (await commissionsOfEvent(platform.sql, m.id, c.event_id))[0]!.status,
    'pending',
    'one millisecond early: still held',
  );

  clock.set(new Date(createdAt + 7 * DAY_MS));
  t.ok((await service.approveEndedHolds()) >= 1);
  const got = await m.client.get(`/api/v1/commissions/${commission!.id}`);
  t.equal(got.body.status, 'approved');
  t.equal(got.body.approved_at, new Date(createdAt + 7 * DAY_MS).toISOString());
  const events = await awaitStreamEvents<any>(
    platform,
    'commission.approved',
    (e) => e.data.commission_id === commission!.id,
    1,
  );
  t.equal(events[0]!.data.status, 'approved');

  t.equal(await service.approveEndedHolds(), 0, 'a second pass approves nothing again');
});
