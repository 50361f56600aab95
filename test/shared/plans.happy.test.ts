import t from 'tap';
import { createApiKey } from '@platform/shared/api-keys';
import { ApiError } from '@platform/shared/errors';
import { addMonth, PLAN_CATALOGUE, PLANS, planTerms, upgradeCharge } from '@platform/shared/plans';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * One catalogue of plans: its prices are whole minor units rising with the rank, and the key rules of every plan
 * (the CLI's and the dashboard's createApiKey) follow what the catalogue says the plan allows, not a list of its own.
 */
t.test('prices are integer minor units rising with the plan; enterprise is sold by contract', async (t) => {
  const priced = PLANS.map((p) => PLAN_CATALOGUE[p]).filter((terms) => terms.price !== null);
  for (const terms of priced) t.ok(Number.isSafeInteger(terms.price!.amount), `${terms.id} in minor units`);
  const amounts = priced.map((terms) => terms.price!.amount);
  t.same(
    amounts,
    [...amounts].sort((a, b) => a - b),
    'cheapest first',
  );
  t.equal(PLAN_CATALOGUE.enterprise.price, null);
  t.same(planTerms('no-such-plan'), PLAN_CATALOGUE.free, 'an unknown stored plan allows only what Free allows');
});

t.test(
  'an upgrade within a period is prorated by the second, rounded half-even; without one a month is due',
  async (t) => {
    // Starter to Growth is 70.00 a month more; a period of 14,000 seconds makes each second half a cent.
    const start = new Date('2026-03-01T00:00:00Z');
    const period = { start, end: new Date(start.getTime() + 14_000_000) };
    const left = (seconds: number) => new Date(period.end.getTime() - seconds * 1000);
    t.equal(upgradeCharge('starter', 'growth', period, left(1)).amount, 0, '0.5 cents rounds to 0 (even)');
    t.equal(upgradeCharge('starter', 'growth', period, left(3)).amount, 2, '1.5 cents rounds to 2 (even)');
    t.equal(upgradeCharge('starter', 'growth', period, left(5)).amount, 2, '2.5 cents rounds to 2 (even)');
    t.same(upgradeCharge('starter', 'growth', period, left(7000)).period, period, 'the period goes on');
    const fresh = upgradeCharge('free', 'growth', period, left(7000));
    t.equal(fresh.amount, 9900, 'from Free a whole month, even with a period on record');
    t.same(fresh.period, { start: left(7000), end: addMonth(left(7000)) });
    const ended = upgradeCharge('starter', 'growth', period, new Date(period.end.getTime() + 1));
    t.equal(ended.amount, 9900, 'after the period a whole month');
    t.same(addMonth(new Date('2026-01-31T10:00:00Z')), new Date('2026-02-28T10:00:00Z'), 'a month from Jan 31');
  },
);

const db = await createTestDatabase(t);

t.test('creating a key, and giving it its own rate limit, is allowed exactly where the catalogue says', async (t) => {
  for (const plan of PLANS) {
    const merchant = (await createMerchant(db.sql, `Plan ${plan}`, plan))!['id'] as string;
    const refusal = (rateLimit?: number) =>
      createApiKey(db.sql, merchant, ['read'], rateLimit, 'test').then(
        () => null,
        (err: ApiError) => err.code,
      );
    const terms = PLAN_CATALOGUE[plan];
    t.equal(await refusal(), terms.allows.api_keys ? null : 'PLAN_REQUIRED', `${plan}: a key`);
    t.equal(
      await refusal(1200),
      terms.allows.custom_rate_limits ? null : 'PLAN_REQUIRED',
      `${plan}: a key with its own limit`,
    );
  }
});
