import t from 'tap';
import { COUNTRY_CODES, isCountryCode } from '@platform/affiliates/domain/countries';
import {
  checkPayoutDetails,
  einDigits,
  isAbaRoutingNumber,
  normalizeIban,
  ssnDigits,
  taxFormExpiry,
} from '@platform/affiliates/domain/tax-forms';
import { maskLastFour } from '@platform/shared/vault';

// The pure rules of tax forms and payout details, value by value.

t.test('ISO 3166-1 alpha-2: the 249 assigned codes, nothing else', async (t) => {
  t.equal(COUNTRY_CODES.size, 249);
  for (const code of ['US', 'DE', 'GB', 'SS', 'BQ', 'CW', 'SX']) t.ok(isCountryCode(code), code);
  for (const code of ['UK', 'EU', 'XX', 'ZZ', 'AN', 'us', 'USA', '']) t.notOk(isCountryCode(code), code);
});

t.test('SSN: area never 000, 666 or 900-999, group never 00, serial never 0000', async (t) => {
  t.same(ssnDigits('123-45-6789'), { digits: '123456789' });
  t.same(ssnDigits('665999999'), { digits: '665999999' });
  t.same(ssnDigits('899-01-0001'), { digits: '899010001' });
  for (const bad of ['000-12-3456', '666-12-3456', '900-12-3456', '999-99-9999'])
    t.same(ssnDigits(bad), { problem: 'is not a valid SSN (area number)' }, bad);
  t.same(ssnDigits('123-00-4567'), { problem: 'is not a valid SSN (group number 00)' });
  t.same(ssnDigits('123-45-0000'), { problem: 'is not a valid SSN (serial number 0000)' });
  for (const bad of ['123-456789', '12345678', '1234567890', '123 45 6789', 'abc-de-fghi'])
    t.same(ssnDigits(bad), { problem: 'must be an SSN: 123-45-6789 or nine digits' }, bad);
});

t.test('EIN: 12-3456789 or nine digits, with an assigned prefix', async (t) => {
  t.same(einDigits('12-3456789'), { digits: '123456789' });
  t.same(einDigits('987654321'), { digits: '987654321' });
  for (const bad of ['00-1234567', '07-1234567', '89-1234567', '97-1234567'])
    t.same(einDigits(bad), { problem: 'is not a valid EIN (prefix)' }, bad);
  t.same(einDigits('123-45-6789'), { problem: 'must be an EIN: 12-3456789 or nine digits' });
});

t.test('IBAN: the mod-97 checksum, spaces and case ignored', async (t) => {
  t.equal(normalizeIban('DE89 3704 0044 0532 0130 00'), 'DE89370400440532013000');
  t.equal(normalizeIban('gb82west12345698765432'), 'GB82WEST12345698765432');
  t.equal(normalizeIban('FR14 2004 1010 0505 0001 3M02 606'), 'FR1420041010050500013M02606');
  t.equal(normalizeIban('DE89 3704 0044 0532 0130 01'), null, 'one digit off');
  t.equal(normalizeIban('GB82WEST12345698765423'), null, 'two digits swapped');
  t.equal(normalizeIban('XX89370400440532013000'), null, 'no such country');
  t.equal(normalizeIban('DE89'), null, 'too short');
});

t.test('ABA routing numbers: nine digits, 3-7-1 weights summing to a multiple of ten', async (t) => {
  for (const good of ['011000015', '021000021', '121000358', '026009593']) t.ok(isAbaRoutingNumber(good), good);
  for (const bad of ['011000016', '021000012', '12100035', '0110000155', '01100001a'])
    t.notOk(isAbaRoutingNumber(bad), bad);
  t.same(checkPayoutDetails({ method: 'bank', routing_number: '021000021', account_number: '0001' }), {
    details: { method: 'bank', routing_number: '021000021', account_number: '0001' },
  });
});

t.test('W-8 forms expire at the end of the third calendar year after signing; a W-9 does not', async (t) => {
  t.equal(taxFormExpiry('W-8BEN', '2026-01-01')!.toISOString(), '2029-12-31T23:59:59.999Z');
  t.equal(taxFormExpiry('W-8BEN-E', '2026-12-31')!.toISOString(), '2029-12-31T23:59:59.999Z');
  t.equal(taxFormExpiry('W-9', '2026-06-01'), null);
});

t.test('masking keeps the last four characters at most', async (t) => {
  t.equal(maskLastFour('123456789'), '*****6789');
  t.equal(maskLastFour('DE89370400440532013000'), '*****3000');
  t.equal(maskLastFour('12345678'), '****5678');
  t.equal(maskLastFour('1234'), '**34', 'a short secret is never shown whole');
  t.equal(maskLastFour('123'), '**3');
});
