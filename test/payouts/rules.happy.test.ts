import t from 'tap';
import {
  calendarYear,
  groupPayouts,
  moveRefusal,
  PAYOUT_MOVES,
  payoutHold,
  scheduledPeriod,
  type PayableCommission,
} from '@platform/commissions/domain/payouts';
import { bankCsv, csvField, paypalCsv, type ExportedPayout } from '@platform/commissions/domain/payout-csv';
import { PAYOUT_STATUSES } from '@platform/shared/schemas/payouts';

/** The payout rules without a database: grouping, the minimum, the tax-form hold, the moves, the CSV layouts. */

const at = (day: number) => new Date(Date.UTC(2026, 10, day));
const c = (id: string, affiliate: string, currency: string, amount: string, day = 1): PayableCommission => ({
  id,
  affiliate_id: affiliate,
  currency,
  amount,
  created_at: at(day),
});

t.test('groups by affiliate and currency with exact sums; groups under the minimum are left out', async (t) => {
  const groups = groupPayouts(
    [
      c('com_3', 'aff_b', 'USD', '0.1000', 4),
      c('com_1', 'aff_a', 'USD', '30.0100', 2),
      c('com_2', 'aff_a', 'USD', '19.9900', 9),
      c('com_4', 'aff_a', 'JPY', '49', 3),
      c('com_5', 'aff_a', 'EUR', '0.1', 5),
      c('com_6', 'aff_a', 'EUR', '0.2', 6),
      c('com_7', 'aff_b', 'USD', '49.9000', 1),
    ],
    '50',
  );
  t.same(groups, [
    {
      affiliateId: 'aff_a',
      currency: 'USD',
      amount: '50.00',
      commissionIds: ['com_1', 'com_2'],
      periodStart: at(2),
      periodEnd: at(9),
    },
    {
      affiliateId: 'aff_b',
      currency: 'USD',
      amount: '50.00',
      commissionIds: ['com_3', 'com_7'],
      periodStart: at(1),
      periodEnd: at(4),
    },
  ]);
  t.same(
    groupPayouts([c('com_5', 'aff_a', 'EUR', '0.1'), c('com_6', 'aff_a', 'EUR', '0.2')], '0.3').map((g) => g.amount),
    ['0.30'],
    'no floating point: 0.1 + 0.2 is 0.30',
  );
  t.same(
    groupPayouts([c('com_1', 'aff_a', 'KWD', '1.005')], '0').map((g) => g.amount),
    ['1.005'],
    'KWD keeps 3 decimals',
  );
  t.same(groupPayouts([], '50'), []);
});

t.test('tax-form hold: us_threshold at 600 in the year with this payout, required always, none never', async (t) => {
  const hold = (policy: 'us_threshold' | 'required' | 'none', yearTotal: string, amount: string, form = false) =>
    payoutHold(policy, { hasValidTaxForm: form, yearTotal, amount });
  t.equal(hold('us_threshold', '0', '599.99'), null);
  t.equal(hold('us_threshold', '0', '600'), 'tax_form_required', 'reaching 600 holds');
  t.equal(hold('us_threshold', '500.00', '100.00'), 'tax_form_required', 'the year so far counts');
  t.equal(hold('us_threshold', '500.00', '99.99'), null);
  t.equal(hold('us_threshold', '5000', '100', true), null, 'a valid form releases');
  t.equal(hold('required', '0', '1'), 'tax_form_required');
  t.equal(hold('required', '0', '1', true), null);
  t.equal(hold('none', '100000', '100000'), null);
});

t.test('moves: pending → sent | canceled, sent → paid | failed; the refusal names the allowed moves', async (t) => {
  const allowed: [string, string][] = [];
  for (const from of PAYOUT_STATUSES)
    for (const to of PAYOUT_STATUSES) if (moveRefusal(from, to, null) === null) allowed.push([from, to]);
  t.same(allowed, [
    ['pending', 'sent'],
    ['pending', 'canceled'],
    ['sending', 'sent'],
    ['sent', 'paid'],
    ['sent', 'failed'],
  ]);
  t.equal(
    moveRefusal('pending', 'paid', null),
    'A pending payout cannot move to paid; allowed moves from pending: sent, canceled',
  );
  t.equal(moveRefusal('paid', 'failed', null), 'A paid payout cannot move to failed; paid is final');
  t.equal(
    moveRefusal('pending', 'sent', 'tax_form_required'),
    'The payout is held (tax_form_required): it can be sent once the affiliate has a valid tax form on file',
  );
  t.equal(moveRefusal('pending', 'canceled', 'tax_form_required'), null, 'a held payout can be canceled');
  t.equal(
    moveRefusal('sending', 'canceled', null),
    'A sending payout cannot move to canceled; allowed moves from sending: sent',
    'a payout whose payment through the platform is under way cannot be canceled',
  );
  t.same(PAYOUT_MOVES.failed, []);
});

t.test('the schedule is due on or after payout_day, once a month (UTC)', async (t) => {
  t.equal(scheduledPeriod(null, at(28)), null);
  t.equal(scheduledPeriod(15, at(14)), null);
  t.equal(scheduledPeriod(15, at(15)), '2026-11');
  t.equal(scheduledPeriod(15, at(30)), '2026-11', 'a missed day is caught up later in the month');
  t.equal(scheduledPeriod(1, new Date(Date.UTC(2027, 0, 1))), '2027-01');
  t.same(calendarYear(new Date('2026-12-31T23:59:59.999Z')), {
    start: new Date('2026-01-01T00:00:00.000Z'),
    end: new Date('2027-01-01T00:00:00.000Z'),
  });
});

t.test('CSV: quoting, formula neutralising, the PayPal and bank layouts', async (t) => {
  t.equal(csvField('plain'), 'plain');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('line\nbreak'), '"line\nbreak"');
  t.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
  t.equal(csvField('-1'), "'-1");
  t.equal(csvField('Ann;=cmd|"/C calc"!A0'), `"Ann;'=cmd|""/C calc""!A0"`, 'a formula after a semicolon');
  t.equal(csvField('Ann\t+1'), `"Ann\t'+1"`, 'or after a tab');
  const base = {
    affiliate_id: 'aff_a',
    display_name: 'Ann, Inc.',
    currency: 'USD',
    period_start: at(1),
    period_end: at(20),
  };
  const payouts: ExportedPayout[] = [
    { ...base, id: 'po_1', amount: '182.5000', details: { method: 'paypal', paypal_email: 'ann@example.com' } },
    { ...base, id: 'po_2', amount: '60.0000', details: { method: 'bank', iban: 'DE89370400440532013000' } },
    {
      ...base,
      id: 'po_3',
      amount: '75.1000',
      details: { method: 'bank', routing_number: '011000015', account_number: '123456789' },
    },
    { ...base, id: 'po_4', amount: '99.0000', details: null },
  ];
  t.equal(paypalCsv(payouts), 'ann@example.com,182.50,USD,po_1,Commissions 2026-11-01 to 2026-11-20,PAYPAL\r\n');
  t.equal(
    bankCsv(payouts),
    'payout_id,affiliate_id,account_holder,iban,routing_number,account_number,amount,currency,reference\r\n' +
      'po_2,aff_a,"Ann, Inc.",DE89370400440532013000,,,60.00,USD,po_2\r\n' +
      'po_3,aff_a,"Ann, Inc.",,011000015,123456789,75.10,USD,po_3\r\n',
  );
});
