import t from 'tap';
import { minorUnitDigits } from '@platform/shared/money';
import { computeCommissionLines } from '@platform/commissions/domain/rules';
import { formatAmount } from '@platform/commissions/domain/money';
import { startPlatform } from '../helpers/platform.ts';
import {
  awaitProcessed,
  conversion,
  createAffiliate,
  recordConversions,
  setMerchantSettings,
  startCommissions,
} from '../helpers/commissions.ts';

/**
 * Commission amounts against a reference computed here independently, with BigInt integers: a decimal is
 * (digits, scale), a product adds scales, and rounding half-even to the currency's minor unit is integer division
 * with the remainder compared to one half. Amounts, rates and currencies are random (seeded, printed on failure).
 */

interface Dec {
  units: bigint;
  scale: number;
}

function parseDec(text: string): Dec {
  const [int, frac = ''] = text.split('.');
  return { units: BigInt(int! + frac), scale: frac.length };
}

function mulDec(a: Dec, b: Dec): Dec {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** Rounds a non-negative decimal to `digits` decimals, half to even. */
function roundHalfEven(d: Dec, digits: number): Dec {
  if (d.scale <= digits) return { units: d.units * 10n ** BigInt(digits - d.scale), scale: digits };
  const divisor = 10n ** BigInt(d.scale - digits);
  const quotient = d.units / divisor;
  const twice = (d.units % divisor) * 2n;
  const up = twice > divisor || (twice === divisor && quotient % 2n === 1n);
  return { units: up ? quotient + 1n : quotient, scale: digits };
}

/** The same value at four decimals (the column's scale), as an integer: "12.3400" and 12.34 compare equal. */
function at4(d: Dec): bigint {
  return d.scale <= 4 ? d.units * 10n ** BigInt(4 - d.scale) : d.units / 10n ** BigInt(d.scale - 4);
}

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = Number(process.env['MONEY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const random = mulberry32(seed);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (max: number) => Math.floor(random() * max);
/** A random decimal with up to `decimals` decimals (sometimes exactly a tie-producing value). */
const randomAmount = (decimals: number): string => {
  const whole = pick([int(10), int(1000), int(10_000_000)]);
  if (decimals === 0) return String(whole);
  const frac = String(int(10 ** decimals)).padStart(decimals, '0');
  return `${whole}.${frac}`;
};
const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'KWD', 'BHD', 'TND', 'CLP'] as const;

t.test('half-even rounding to the minor unit, by example', async (t) => {
  const settings = { commission_rules: {}, default_rate: 0.1, level_rates: [] };
  const direct = (amount: string, currency: string, rate: string | null = null) =>
    computeCommissionLines({
      eventType: 'purchase',
      amount,
      currency,
      settings,
      rates: { customRate: rate, tierRate: null },
    }).map((l) => formatAmount(l.amount, currency));
  t.same(direct('1.25', 'USD'), ['0.12'], '0.125 → 0.12 (2 is even)');
  t.same(direct('1.35', 'USD'), ['0.14'], '0.135 → 0.14 (4 is even)');
  t.same(direct('1.36', 'USD'), ['0.14'], '0.136 → 0.14');
  t.same(direct('25', 'JPY'), ['2'], '2.5 yen → 2');
  t.same(direct('35', 'JPY'), ['4'], '3.5 yen → 4');
  t.same(direct('1.255', 'KWD'), ['0.126'], '0.1255 KWD → 0.126');
  t.same(direct('1.245', 'KWD'), ['0.124'], '0.1245 KWD → 0.124');
  t.same(direct('0.04', 'USD'), [], '0.004 rounds to nothing: no commission');
  t.same(direct('0.05', 'USD'), [], '0.005 → 0.00 (0 is even): no commission');
  t.same(direct('0.15', 'USD'), ['0.02'], '0.015 → 0.02');
  t.same(direct('0.1', 'USD', '0.333333'), ['0.03']);
  t.same(
    direct('999999999999.99', 'USD', '0.999999'),
    ['999998999999.99'],
    'no float: 999999999999.99 × 0.999999 = 999998999999.990000…01',
  );
  const levels = computeCommissionLines({
    eventType: 'purchase',
    amount: '33.33',
    currency: 'USD',
    settings: { commission_rules: {}, default_rate: 0.1, level_rates: [0.5, 0.05] },
    rates: { customRate: null, tierRate: null },
  });
  t.same(
    levels.map((l) => [l.level, l.rate, formatAmount(l.amount, 'USD')]),
    [
      [0, '0.1', '3.33'],
      [1, '0.5', '1.66'], // 1.665 → 1.66: a fraction of the rounded direct commission
      [2, '0.05', '0.17'], // 0.1665 → 0.17
    ],
  );
});

t.test('1,000 random conversions: every commission equals the exact decimal reference', async (t) => {
  t.comment(`MONEY_SEED=${seed}`);
  const platform = await startPlatform(t);
  await startCommissions(t, platform, { env: { CONVERSION_CONCURRENCY: '8' } });
  const m = await platform.merchant();

  const defaultRate = `0.${String(1 + int(999_999)).padStart(6, '0')}`;
  const levelRates = Array.from({ length: 1 + int(5) }, () =>
    pick(['0.5', '0.25', '0.125', `0.${String(int(10_000)).padStart(4, '0')}`]),
  );
  const flatAmount = randomAmount(4);
  await setMerchantSettings(platform.sql, m.id, [
    `default_rate=${defaultRate}`,
    `level_rates=[${levelRates.join(',')}]`,
    `commission_rules.bonus={"kind":"flat","amount":"${flatAmount}"}`,
  ]);

  // 30 affiliates in random lineages; custom rates include exact halves and quarters, which make ties.
  const affiliates: { id: string; parent: number | null; rate: string | null }[] = [];
  for (let i = 0; i < 30; i++) {
    const parent = i < 3 ? null : int(i);
    const rate = pick([
      null,
      '0.5',
      '0.25',
      '0.05',
      `0.${String(int(1_000_000)).padStart(6, '0')}`,
      `0.${String(int(1_000_000)).padStart(6, '0')}`,
    ]);
    const created = await createAffiliate(m.client, {
      email: `seller${i}@example.com`,
      ...(parent === null ? {} : { parent_email: `seller${parent}@example.com` }),
      ...(rate === null ? {} : { custom_commission_rate: Number(rate) }),
    });
    affiliates.push({ id: created.id, parent, rate });
  }

  const conversions = Array.from({ length: 1000 }, () => {
    const currency = pick(CURRENCIES);
    const who = int(affiliates.length);
    return {
      who,
      event: conversion({
        affiliate_id: affiliates[who]!.id,
        event_type: random() < 0.1 ? 'bonus' : 'purchase',
        currency,
        amount: randomAmount(minorUnitDigits(currency)),
      }),
    };
  });
  await recordConversions(
    platform.sql,
    m.id,
    conversions.map((c) => c.event),
  );
  await awaitProcessed(
    platform.sql,
    m.id,
    conversions.map((c) => c.event.event_id),
    120_000,
  );

  type Row = { event_id: string; level: number; affiliate_id: string; amount: string; rate: string | null };
  const rows: Row[] = await platform.sql<Row[]>`
    select event_id, level, affiliate_id, amount::text, rate::text from commissions where merchant_id = ${m.id}`;
  const byEvent = new Map<string, Row[]>();
  for (const r of rows) byEvent.set(r.event_id, [...(byEvent.get(r.event_id) ?? []), r]);

  let mismatches = 0;
  let expectedRows = 0;
  for (const { who, event } of conversions) {
    const digits = minorUnitDigits(event.currency);
    let direct: Dec;
    let directRate: string | null;
    if (event.event_type === 'bonus') {
      direct = roundHalfEven(parseDec(flatAmount), digits);
      directRate = null;
    } else {
      const rate = affiliates[who]!.rate ?? defaultRate;
      direct = roundHalfEven(mulDec(parseDec(event.amount), parseDec(rate)), digits);
      directRate = rate;
    }
    const expected: { level: number; affiliate_id: string; amount: bigint; rate: Dec | null }[] = [];
    if (direct.units > 0n) {
      expected.push({
        level: 0,
        affiliate_id: affiliates[who]!.id,
        amount: at4(direct),
        rate: directRate === null ? null : parseDec(directRate),
      });
      let ancestor = affiliates[who]!.parent;
      for (let level = 1; level <= levelRates.length && ancestor !== null; level++) {
        const amount = roundHalfEven(mulDec(direct, parseDec(levelRates[level - 1]!)), digits);
        if (amount.units > 0n)
          expected.push({
            level,
            affiliate_id: affiliates[ancestor]!.id,
            amount: at4(amount),
            rate: parseDec(levelRates[level - 1]!),
          });
        ancestor = affiliates[ancestor]!.parent;
      }
    }
    expectedRows += expected.length;
    const actual = (byEvent.get(event.event_id) ?? []).sort((a, b) => a.level - b.level);
    const same =
      actual.length === expected.length &&
      actual.every((a, i) => {
        const e = expected[i]!;
        const rateMatches =
          e.rate === null ? a.rate === null : a.rate !== null && at12(parseDec(a.rate)) === at12(e.rate);
        return (
          a.level === e.level &&
          a.affiliate_id === e.affiliate_id &&
          at4(parseDec(a.amount)) === e.amount &&
          rateMatches
        );
      });
    if (!same) {
      mismatches++;
      if (mismatches <= 5)
        t.fail(
          `event ${event.event_type} ${event.amount} ${event.currency}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
        );
    }
  }
  t.equal(mismatches, 0, `all 1,000 conversions match the reference (seed ${seed})`);
  t.equal(rows.length, expectedRows, 'no commission more, none fewer');
  t.ok(
    rows.some((r) => r.level > 0),
    'level commissions were exercised',
  );
  t.ok(
    conversions.some((c) => c.event.currency === 'JPY'),
    'JPY was exercised',
  );
});

/** A rate at twelve decimals as an integer, to compare "0.500000" with "0.5". */
function at12(d: Dec): bigint {
  return d.units * 10n ** BigInt(12 - d.scale);
}
