import t from 'tap';
import { decimalToMinor, divideHalfEven, minorToDecimal } from '@platform/shared/money';

// The one converter between decimal amounts and minor units: the dashboard's Balance page and the payments
// service's affiliate payouts both use it.
t.test('minor units as decimals, by the currency’s exponent', async (t) => {
  t.equal(minorToDecimal(25_000, 'usd'), '250.00');
  t.equal(minorToDecimal(24_245, 'USD'), '242.45');
  t.equal(minorToDecimal(5, 'usd'), '0.05');
  t.equal(minorToDecimal(-755, 'usd'), '-7.55');
  t.equal(minorToDecimal(0, 'eur'), '0.00');
  t.equal(minorToDecimal(500, 'jpy'), '500', 'no minor unit');
  t.equal(minorToDecimal(1_234, 'kwd'), '1.234', 'three decimals');
  t.equal(minorToDecimal(12_345, 'clf'), '1.2345', 'four decimals');
  t.equal(minorToDecimal(900_719_925_474_099, 'usd'), '9007199254740.99', 'large amounts exactly');
  t.throws(() => minorToDecimal(1.5, 'usd'), RangeError, 'a fraction of a minor unit is no amount');
});

t.test('decimals in minor units: exact, never rounded', async (t) => {
  t.equal(decimalToMinor('250.00', 'usd'), 25_000);
  t.equal(decimalToMinor('250', 'usd'), 25_000);
  t.equal(decimalToMinor('182.5', 'USD'), 18_250);
  t.equal(decimalToMinor('0.1', 'usd'), 10);
  t.equal(decimalToMinor('0', 'usd'), 0, 'zero converts; a caller that needs a positive amount says so');
  t.equal(decimalToMinor('19.990', 'usd'), 1_999, 'trailing zeros are not finer');
  t.equal(decimalToMinor('12.3000', 'usd'), 1_230);
  t.equal(decimalToMinor('0.001', 'usd'), null, 'more decimals than cents is refused, not rounded');
  t.equal(decimalToMinor('500', 'jpy'), 500);
  t.equal(decimalToMinor('5.5', 'jpy'), null);
  t.equal(decimalToMinor('1.234', 'kwd'), 1_234);
  t.equal(decimalToMinor('9007199254740.99', 'usd'), 900_719_925_474_099, 'the largest exact amount');
  t.equal(decimalToMinor('9007199254740.992', 'kwd'), null, 'past the largest exact integer');
  for (const bad of ['', '-1', '-5', '1e3', '01', '1.', ' 1', '1,5'])
    t.equal(decimalToMinor(bad, 'usd'), null, `${JSON.stringify(bad)} is not a decimal`);
});

t.test('the one rounding rule: half to even', async (t) => {
  t.equal(divideHalfEven(25, 10), 2, '2.5 → 2');
  t.equal(divideHalfEven(35, 10), 4, '3.5 → 4');
  t.equal(divideHalfEven(26, 10), 3);
  t.equal(divideHalfEven(24, 10), 2);
  t.equal(divideHalfEven(58_000, 1000), 58);
  t.equal(divideHalfEven(0, 7), 0);
});
