import t from 'tap';
import { decimalToMinor, minorToDecimal } from '@platform/gateway/dashboard/minor-units';

t.test('minor units to the decimal people read, by the currency’s minor unit', async (t) => {
  t.equal(minorToDecimal(25_000, 'usd'), '250.00');
  t.equal(minorToDecimal(24_245, 'usd'), '242.45');
  t.equal(minorToDecimal(5, 'usd'), '0.05');
  t.equal(minorToDecimal(-755, 'usd'), '-7.55');
  t.equal(minorToDecimal(0, 'eur'), '0.00');
  t.equal(minorToDecimal(500, 'jpy'), '500', 'no minor unit');
  t.equal(minorToDecimal(1_234, 'kwd'), '1.234', 'three decimals');
  t.equal(minorToDecimal(900_719_925_474_099, 'usd'), '9007199254740.99', 'large amounts exactly');
});

t.test('a typed decimal to minor units, refused when finer than the currency', async (t) => {
  t.equal(decimalToMinor('250.00', 'usd'), 25_000);
  t.equal(decimalToMinor('250', 'usd'), 25_000);
  t.equal(decimalToMinor('0.1', 'usd'), 10);
  t.equal(decimalToMinor('19.990', 'usd'), 1_999, 'trailing zeros are not finer');
  t.equal(decimalToMinor('0.001', 'usd'), null);
  t.equal(decimalToMinor('500', 'jpy'), 500);
  t.equal(decimalToMinor('5.5', 'jpy'), null);
  t.equal(decimalToMinor('1.234', 'kwd'), 1_234);
  for (const bad of ['', '-1', '1e3', '01', '1.', ' 1'])
    t.equal(decimalToMinor(bad, 'usd'), null, `${JSON.stringify(bad)} is not a decimal`);
});
