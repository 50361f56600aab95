import t from 'tap';
import { startCommissions } from '../helpers/commissions.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';

/**
 * The monthly schedule (merchant setting payout_day) run by the commissions service's workers: two replicas run
 * their passes at the same moment and the month's payouts are created once, on or after the day, once a month.
 */

const { platform, clock, service } = await startPayoutsPlatform(t);
const replica = await startCommissions(t, platform, { now: clock.now });
const bothPasses = async () => {
  const counts = await Promise.all([service.runPayoutSchedule(), replica.service.runPayoutSchedule()]);
  return counts[0] + counts[1];
};

t.test('two replicas create the month’s payouts once, on or after payout_day', async (t) => {
  clock.set(new Date('2026-11-14T12:00:00.000Z'));
  const monthly = await payoutMerchant(platform, ['payout_day=15', 'tax_form_policy=none']);
  const manual = await payoutMerchant(platform, ['tax_form_policy=none']);
  const later = await payoutMerchant(platform, ['payout_day=20', 'tax_form_policy=none']);
  const ana = await affiliate(monthly, 'ana@example.com');
  const bo = await affiliate(manual, 'bo@example.com');
  const cy = await affiliate(later, 'cy@example.com');
  const anaIds = await approvedCommissions(platform, service, monthly.id, ana.id, [{ amount: '800.00' }]);
  await approvedCommissions(platform, service, manual.id, bo.id, [{ amount: '800.00' }]);
  await approvedCommissions(platform, service, later.id, cy.id, [{ amount: '800.00' }]);

  t.equal(await bothPasses(), 0, 'the day before: nothing');
  clock.set(new Date('2026-11-15T00:30:00.000Z'));
  t.equal(await bothPasses(), 1, 'on the day: one payout, made by one replica');
  const [payout] = (await monthly.client.get('/api/v1/payouts')).body.data;
  t.match(payout, { affiliate_id: ana.id, amount: 80, status: 'pending', commission_ids: anaIds });
  t.same((await manual.client.get('/api/v1/payouts')).body.data, [], 'payout_day null: only on request');
  t.same((await later.client.get('/api/v1/payouts')).body.data, [], 'a later day: not yet');
  const runs = await platform.sql`select merchant_id, period, payouts from payout_schedule_runs order by merchant_id`;
  t.same(
    runs.map((r) => [r['merchant_id'], r['period'], r['payouts']]),
    [[monthly.id, '2026-11', 1]],
  );

  await approvedCommissions(platform, service, monthly.id, ana.id, [{ amount: '900.00' }]);
  clock.set(new Date('2026-11-28T09:00:00.000Z'));
  t.equal(await bothPasses(), 1, 'later in the month: the other merchant’s day has come; the first ran already');
  t.equal((await monthly.client.get('/api/v1/payouts')).body.data.length, 1);
  t.equal((await later.client.get('/api/v1/payouts')).body.data.length, 1);

  clock.set(new Date('2026-12-15T00:00:01.000Z'));
  t.equal(await bothPasses(), 1, 'the next month: the new commission');
  const december = (await monthly.client.get('/api/v1/payouts')).body.data;
  t.equal(december.length, 2);
  t.equal(december[0].amount, 90);
});

t.test('a pass releases holds whose affiliate has a valid form on file by now', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=required']);
  const ana = await affiliate(m, 'ana@example.com');
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '800.00' }]);
  const [held] = (await m.client.post('/api/v1/payouts')).body.data;
  t.equal(held.held_reason, 'tax_form_required');
  await service.runPayoutSchedule();
  t.equal((await m.client.get(`/api/v1/payouts/${held.id}`)).body.held_reason, 'tax_form_required', 'no form: held');
  // A form stored by another path than the API (a restore, an import): the pass still releases the hold.
  await platform.sql`
    insert into tax_forms (id, merchant_id, affiliate_id, form_type, details, signed_on)
    values ('txf_01jd3t6m0s2e4w5x6y7z8a9b0c', ${m.id}, ${ana.id}, 'W-9', '{}'::jsonb, '2026-11-01')`;
  await service.runPayoutSchedule();
  t.equal((await m.client.get(`/api/v1/payouts/${held.id}`)).body.held_reason, null);
});
