import t from 'tap';
import { withDefaults } from '@platform/shared/schemas/merchant-settings';
import type { ConversionContext } from '@platform/commissions/queries/conversions';
import type { ConversionEnvelope } from '@platform/commissions/domain/envelope';
import {
  isPlan,
  lockKeysOf,
  NOTHING,
  planConversion,
  tierPromotion,
  type Plan,
} from '@platform/commissions/domain/plan';

// The commission engine's decisions from a conversion and its context, without a database: what commissions, fraud
// hits, voids, revenue counting and tier moves a conversion causes.
const at = new Date('2026-11-25T12:00:00Z');
const settings = (over: Record<string, unknown> = {}) =>
  withDefaults({ default_rate: 0.1, level_rates: [0.5, 0.1], ...over });

function envelope(over: Partial<ConversionEnvelope['data']> = {}): ConversionEnvelope {
  return {
    id: 'evt_env',
    type: 'conversion.recorded',
    merchant_id: 'mer_a',
    created_at: at.toISOString(),
    data: {
      event_id: 'evt_1',
      event_type: 'purchase',
      external_id: 'order-1',
      amount: '120.50',
      currency: 'USD',
      affiliate_id: 'aff_jane',
      attributed_by: 'cookie',
      visit: { id: 'vis_1', ip_hash: 'iphash', fingerprint: null },
      customer_email: null,
      created_at: at.toISOString(),
      ...over,
    },
  };
}

function context(
  over: Partial<ConversionContext> = {},
  affiliate: Partial<NonNullable<ConversionContext['affiliate']>> = {},
): ConversionContext {
  return {
    processedBefore: false,
    affiliate: {
      id: 'aff_jane',
      status: 'approved',
      tier_id: null,
      tier_rate: null,
      tier_threshold: null,
      custom_commission_rate: null,
      email_matches: false,
      fingerprint_matches: false,
      ...affiliate,
    },
    refunded: false,
    byVisit: 1,
    byIp: 1,
    ancestors: [
      { id: 'aff_lead', status: 'approved', level: 1 },
      { id: 'aff_top', status: 'approved', level: 2 },
    ],
    ...over,
  };
}

const plan = (p: Plan | ReturnType<typeof planConversion>): Plan => {
  if (!isPlan(p)) throw new Error(`expected a plan, got ${JSON.stringify(p)}`);
  return p;
};
const lines = (p: Plan) =>
  p.lines.map((l) => ({ affiliateId: l.affiliateId, level: l.level, rate: l.rate, amount: l.amount }));

t.test('a clean conversion: a line per level with an earner, revenue counted, tier looked up', async (t) => {
  const p = plan(planConversion(envelope(), settings(), context(), at));
  // 120.50 × 0.1 = 12.05; 12.05 × 0.5 = 6.025 → 6.02 (half-even); 12.05 × 0.1 = 1.205 → 1.20.
  t.same(lines(p), [
    { affiliateId: 'aff_jane', level: 0, rate: '0.1', amount: '12.05' },
    { affiliateId: 'aff_lead', level: 1, rate: '0.5', amount: '6.02' },
    { affiliateId: 'aff_top', level: 2, rate: '0.1', amount: '1.20' },
  ]);
  t.match(p, { hits: [], flagged: false, held: false, voidReason: null, countsRevenue: true, tierLookup: true });
  t.ok(
    p.lines.every((l) => l.id.startsWith('com_')),
    'each line has its commission id',
  );
});

t.test('an ancestor not approved earns nothing; the levels above it keep their numbers', async (t) => {
  for (const status of ['suspended', 'rejected', 'pending'] as const) {
    const ancestors = [
      { id: 'aff_lead', status, level: 1 },
      { id: 'aff_top', status: 'approved' as const, level: 2 },
    ];
    t.same(
      lines(plan(planConversion(envelope(), settings(), context({ ancestors }), at))).map((l) => [
        l.affiliateId,
        l.level,
      ]),
      [
        ['aff_jane', 0],
        ['aff_top', 2],
      ],
      `a ${status} ancestor`,
    );
  }
});

t.test(
  'no commission and no revenue for an affiliate not approved or missing; nothing at all for a duplicate',
  async (t) => {
    for (const status of ['suspended', 'rejected', 'pending'] as const)
      t.equal(planConversion(envelope(), settings(), context({}, { status }), at), NOTHING, `a ${status} affiliate`);
    t.equal(planConversion(envelope(), settings(), context({ affiliate: null }), at), NOTHING);
    t.same(planConversion(envelope(), settings(), context({ processedBefore: true }), at), { kind: 'duplicate' });
  },
);

t.test('fraud rules: what matched, never the matching values; hold or void as the merchant says', async (t) => {
  const selfReferral = plan(
    planConversion(
      envelope({ customer_email: 'jane@example.com' }),
      settings(),
      context({}, { email_matches: true }),
      at,
    ),
  );
  t.same(selfReferral.hits, [{ rule: 'self_referral', details: { matched: 'customer_email' } }]);
  t.match(selfReferral, { flagged: true, held: true, voidReason: null, countsRevenue: false });
  const fingerprint = plan(
    planConversion(envelope(), settings({ fraud_action: 'void' }), context({}, { fingerprint_matches: true }), at),
  );
  t.same(fingerprint.hits, [{ rule: 'own_fingerprint', details: { matched: 'visit_fingerprint', visit_id: 'vis_1' } }]);
  t.match(fingerprint, { held: false, voidReason: 'fraud', countsRevenue: false });
  const velocity = plan(
    planConversion(envelope(), settings({ fraud_max_conversions_per_hour: 3 }), context({ byVisit: 2, byIp: 4 }), at),
  );
  t.same(velocity.hits, [
    { rule: 'conversion_velocity', details: { source: 'ip', conversions_in_one_hour: 4, limit: 3 } },
  ]);
  const atLimit = plan(
    planConversion(envelope(), settings({ fraud_max_conversions_per_hour: 3 }), context({ byVisit: 3, byIp: 3 }), at),
  );
  t.same(atLimit.hits, [], 'the limit itself is allowed');
});

t.test('a refund that overtook its order: the commissions are born voided and count no revenue', async (t) => {
  t.match(plan(planConversion(envelope(), settings(), context({ refunded: true }), at)), {
    voidReason: 'refund',
    countsRevenue: false,
  });
});

t.test('tiers are looked up only in the merchant currency and for a positive amount', async (t) => {
  t.equal(plan(planConversion(envelope({ currency: 'EUR' }), settings(), context(), at)).tierLookup, false);
  t.equal(plan(planConversion(envelope({ amount: '0' }), settings(), context(), at)).tierLookup, false);
});

t.test('tier promotion: up to the tier reached, never down or sideways', async (t) => {
  const gold = { id: 'tier_gold', rate: '0.2', threshold: '1000' };
  t.equal(tierPromotion({ tier_id: null, tier_threshold: null }, gold), gold, 'no tier yet: promoted');
  t.equal(tierPromotion({ tier_id: 'tier_silver', tier_threshold: '500' }, gold), gold, 'a lower tier: promoted');
  t.equal(tierPromotion({ tier_id: 'tier_gold', tier_threshold: '1000' }, gold), null, 'already there');
  t.equal(
    tierPromotion({ tier_id: 'tier_vip', tier_threshold: '5000' }, gold),
    null,
    'a higher tier set by hand stays',
  );
  t.equal(tierPromotion({ tier_id: 'tier_peer', tier_threshold: '1000' }, gold), null, 'not sideways');
  t.equal(tierPromotion({ tier_id: null, tier_threshold: null }, undefined), null, 'no tier reached');
});

t.test('lock keys: the order, the visit, the IP and the affiliate, qualified by the merchant', async (t) => {
  t.same(lockKeysOf(envelope()), ['mer_a:order:order-1', 'mer_a:visit:vis_1', 'mer_a:ip:iphash', 'mer_a:aff:aff_jane']);
  t.same(lockKeysOf(envelope({ visit: null, affiliate_id: null })), ['mer_a:order:order-1']);
});
