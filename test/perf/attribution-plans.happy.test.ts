import t from 'tap';
import { connectDatabase } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { findAttributionContexts } from '@platform/events/queries/attribution-context';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { createTestDatabase } from '../helpers/platform.ts';
import { clickReferralLink, createAffiliate, setSettings, startWithEvents } from '../events/setup.ts';

/**
 * Recording events reads every batch's settings and attribution with one statement. Left to choose, Postgres
 * planned it afresh on almost every call (planning costing several times the execution), so it runs on a pool
 * whose connections use generic plans: made on the first call of a connection and used for every call after.
 */
const { url, sql } = await createTestDatabase(t);
const merchantId = (await createMerchant(sql, 'Attribution Plans', 'growth'))!['id'] as string;
const otherMerchantId = (await createMerchant(sql, 'Someone Else', 'growth'))!['id'] as string;
await sql`
  insert into affiliates (id, merchant_id, slug, email, display_name, status)
  values ('aff_plans_1', ${merchantId}, 'plans-one', 'one@example.com', 'One', 'approved'),
         ('aff_plans_2', ${merchantId}, 'plans-two', 'two@example.com', 'Two', 'suspended')`;
// A visit id carries the time it was made, which the lookup reads the visit's partition by.
const visitId = newId('vis');
await sql`
  insert into visits (id, merchant_id, affiliate_id, ip_hash, expires_at)
  values (${visitId}, ${merchantId}, 'aff_plans_1', 'hash-1', now() + interval '30 days')`;
await sql`insert into coupons (id, merchant_id, affiliate_id, code) values ('cpn_plans_1', ${merchantId}, 'aff_plans_2', 'Spring10')`;

// One connection of such a pool, so that its prepared statements can be looked at.
const single = connectDatabase(url, { max: 1, applicationName: 'attribution-plans-test', genericPlans: true });
t.teardown(() => single.end({ timeout: 5 }));

t.test('eight batches of every size use one generic plan and read the right rows', async (t) => {
  for (let i = 0; i < 8; i++) {
    const contexts = await findAttributionContexts(single, [
      { merchantId, visitId, coupon: null },
      ...(i % 2 === 0 ? [{ merchantId, visitId: null, coupon: 'SPRING10' }] : []),
      ...(i % 4 === 0 ? [{ merchantId: otherMerchantId, visitId, coupon: 'spring10' }] : []),
    ]);
    t.equal(contexts[0]?.visit?.affiliate_id, 'aff_plans_1', `call ${i + 1}: the visit's affiliate`);
    t.equal(contexts[0]?.visit?.affiliate_status, 'approved', `call ${i + 1}: its status`);
    if (i % 2 === 0)
      t.same(
        contexts[1]?.couponOwner,
        { affiliate_id: 'aff_plans_2', status: 'suspended' },
        `call ${i + 1}: the coupon's owner`,
      );
    if (i % 4 === 0) {
      t.equal(contexts[2]?.visit, undefined, `call ${i + 1}: another merchant's lookup finds no visit of this one`);
      t.equal(contexts[2]?.couponOwner, undefined, `call ${i + 1}: nor its coupon`);
    }
  }
  const plans = await single<{ generic_plans: string; custom_plans: string }[]>`
    select generic_plans::text, custom_plans::text from pg_prepared_statements
    where statement like '%with ordinality as r(merchant_id, visit_id, coupon, visit_from, visit_to, n)%' and statement not like '%pg_prepared_statements%'`;
  t.same(plans, [{ generic_plans: '8', custom_plans: '0' }], 'the generic plan, made once, for every call');
});

t.test('a pool without the option plans as Postgres chooses', async (t) => {
  const plain = connectDatabase(url, { max: 1, applicationName: 'attribution-plans-plain' });
  t.teardown(() => plain.end({ timeout: 5 }));
  const [row] = await plain<{ mode: string }[]>`select current_setting('plan_cache_mode') as mode`;
  t.equal(row!.mode, 'auto');
});

t.test('the events service reads attribution on its generic-plan connections', async (t) => {
  const { platform } = await startWithEvents(t);
  const merchant = await platform.merchant();
  await setSettings(platform.sql, merchant.id, { landing_url: 'https://shop.example.com/' });
  const jane = await createAffiliate(merchant.client, 'jane@example.com');
  const visitId = await clickReferralLink(platform.baseUrl, merchant.id, jane.slug);
  const res = await merchant.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'plans-1',
    cookie_id: visitId,
    amount: 10,
  });
  t.equal(res.status, 201);
  t.equal(res.body.attributed_by, 'cookie');
  const backends = await platform.sql<{ query: string }[]>`
    select query from pg_stat_activity where datname = current_database() and application_name = 'events-attribution'`;
  t.ok(
    backends.some((b) =>
      b.query.includes('with ordinality as r(merchant_id, visit_id, coupon, visit_from, visit_to, n)'),
    ),
    'a connection named events-attribution ran the read',
  );
});
