import t, { type Test } from 'tap';
import { newId } from '@platform/shared/ids';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * Migration 012 dropped the separate foreign keys from commissions and affiliate_stats to merchants (and an index
 * that duplicated the primary key). What they guarded is still guarded, by the composite key to the merchant's
 * affiliate: no commission or revenue row can name a merchant that does not exist, or another merchant's affiliate.
 */
const { sql } = await createTestDatabase(t);
const merchant = (await createMerchant(sql, 'Integrity', 'growth'))!['id'] as string;
const other = (await createMerchant(sql, 'Integrity Other', 'growth'))!['id'] as string;

async function affiliateOf(merchantId: string): Promise<string> {
  const id = newId('aff');
  await sql`
    insert into affiliates (id, merchant_id, slug, email, display_name, status, created_at, updated_at)
    values (${id}, ${merchantId}, ${id}, ${id + '@example.com'}, 'Integrity', 'approved', now(), now())`;
  return id;
}
const mine = await affiliateOf(merchant);
const theirs = await affiliateOf(other);

const insertCommission = (merchantId: string, affiliateId: string) => sql`
  insert into commissions (id, merchant_id, affiliate_id, event_id, order_id, level, rate, amount, currency, status, held, created_at)
  values (${newId('com')}, ${merchantId}, ${affiliateId}, ${newId('evt')}, 'order-1', 0, 0.1, 1.00, 'USD', 'pending', false, now())`;
const insertStats = (merchantId: string, affiliateId: string) => sql`
  insert into affiliate_stats (merchant_id, affiliate_id, currency, attributed_revenue, conversions, updated_at)
  values (${merchantId}, ${affiliateId}, 'USD', 10, 1, now())`;
const violation = async (t: Test, query: Promise<unknown>, name: string) => {
  const err = await query.then(
    () => null,
    (e: { code?: string; constraint_name?: string }) => e,
  );
  t.equal(err?.code, '23503', `${name}: foreign key violation`);
  return err?.constraint_name;
};

t.test('the separate merchant keys and the duplicate index are gone', async (t) => {
  const keys = await sql<{ table: string; def: string }[]>`
    select conrelid::regclass::text as table, pg_get_constraintdef(oid) as def from pg_constraint
    where contype = 'f' and conrelid in ('commissions'::regclass, 'affiliate_stats'::regclass) order by 1, 2`;
  t.same(keys, [
    { table: 'affiliate_stats', def: 'FOREIGN KEY (merchant_id, affiliate_id) REFERENCES affiliates(merchant_id, id)' },
    { table: 'commissions', def: 'FOREIGN KEY (merchant_id, affiliate_id) REFERENCES affiliates(merchant_id, id)' },
  ]);
  const [index] = await sql`select 1 from pg_indexes where indexname = 'commissions_merchant_id'`;
  t.equal(index, undefined);
});

t.test('a commission must name an affiliate of its own merchant', async (t) => {
  await insertCommission(merchant, mine);
  t.equal(
    await violation(t, insertCommission(merchant, theirs), "another merchant's affiliate"),
    'commissions_merchant_id_affiliate_id_fkey',
  );
  t.equal(
    await violation(t, insertCommission('mer_none', mine), 'an unknown merchant'),
    'commissions_merchant_id_affiliate_id_fkey',
  );
});

t.test('attributed revenue must name an affiliate of its own merchant', async (t) => {
  await insertStats(merchant, mine);
  t.equal(
    await violation(t, insertStats(merchant, theirs), "another merchant's affiliate"),
    'affiliate_stats_merchant_id_affiliate_id_fkey',
  );
  t.equal(
    await violation(t, insertStats('mer_none', mine), 'an unknown merchant'),
    'affiliate_stats_merchant_id_affiliate_id_fkey',
  );
});

t.test('a merchant with affiliates cannot be deleted from under its commissions', async (t) => {
  t.equal(
    await violation(t, sql`delete from merchants where id = ${merchant}`, 'deleting the merchant'),
    'affiliates_merchant_id_fkey',
  );
});
