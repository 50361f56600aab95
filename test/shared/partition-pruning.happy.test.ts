import t from 'tap';
import postgres from 'postgres';
import { createKey, createMerchant } from '../../scripts/admin/commands.ts';
import { newId } from '@platform/shared/ids';
import { outboxPartitions, pruneOutbox } from '@platform/shared/outbox';
import { ensurePartitions, partitionsOf, periodsFrom, type PartitionedTable } from '@platform/shared/partitions';
import { findDelivery } from '@platform/dispatcher/queries/delivery-log';
import { webhookAttemptPartitions } from '@platform/dispatcher/queries/attempts';
import { findAttributionContexts } from '@platform/events/queries/attribution-context';
import { deleteVisitsOlderThan, findVisit, visitPartitions } from '@platform/events/queries/visits';
import { keyDailyUsage } from '@platform/gateway/surfaces/dashboard/queries/keys';
import { keyUsagePartitions } from '@platform/gateway/surfaces/api-v1/usage';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * The partitioned tables' hot lookups read only the partitions that can hold their rows. A migrated database gets
 * partitions for the months (days, for attempts) after the one the old rows were attached as, rows in each, and
 * ANALYZE; then each query the services run is run as they run it, with auto_explain sending its plan back.
 */
const db = await createTestDatabase(t);
const merchantId = (await createMerchant(db.sql, 'Partitions', 'growth'))!['id'] as string;
const affiliateId = newId('aff');
await db.sql`insert into affiliates (id, merchant_id, slug, email, display_name, status)
             values (${affiliateId}, ${merchantId}, 'jane', 'jane@example.com', 'Jane', 'approved')`;

/** The periods after the partition of the rows from before partitioning: the first starts at its upper bound. */
async function periodsAfterLegacy(spec: PartitionedTable, count: number) {
  const legacy = (await partitionsOf(db.sql, spec.table)).find((p) => p.from === -Infinity)!;
  const first = new Date(legacy.to);
  await ensurePartitions(db.sql, { ...spec, ahead: count - 1 }, first);
  return periodsFrom(spec, first, count);
}

// A connection that explains every statement it runs, and the plans it sent back since the last call.
const plans: string[] = [];
const explained = postgres(db.url, { max: 1, onnotice: (n) => plans.push(String(n['message'])) });
t.teardown(() => explained.end({ timeout: 1 }));
await explained`load 'auto_explain'`;
await explained`set auto_explain.log_min_duration = 0`;
await explained`set auto_explain.log_level = 'notice'`;
await explained`set auto_explain.log_analyze = on`;
const takePlan = () => plans.splice(0).join('\n');
/**
 * The partitions of `table` a plan scans: pruned at planning or at the executor's start, a partition is not in the
 * plan ("Subplans Removed"); pruned at run time, its scan says "never executed". A DELETE lists every partition as
 * a target, scanned or not: only scans count.
 */
const partitionsRead = (plan: string, table: string) =>
  [...plan.matchAll(new RegExp(`Scan (?:using \\S+ )?on (${table}_[a-z0-9_]+)[^\\n]*`, 'g'))]
    .filter((m) => !m[0].includes('never executed'))
    .map((m) => m[1]!)
    .filter((name, i, all) => all.indexOf(name) === i)
    .sort();

t.test('visits: the lookup by id reads the partition of the time the id carries', async (t) => {
  const periods = await periodsAfterLegacy(visitPartitions, 3);
  const ids: string[] = [];
  for (const p of periods) {
    const at = new Date(p.from.getTime() + 10 * 86_400_000);
    for (let i = 0; i < 200; i++) {
      const id = newId('vis', at.getTime() + i);
      ids.push(id);
      await db.sql`insert into visits (id, merchant_id, affiliate_id, created_at, expires_at)
                   values (${id}, ${merchantId}, ${affiliateId}, ${at}, ${at})`;
    }
  }
  await db.sql`analyze visits`;
  const middle = ids[250]!;
  takePlan();
  t.ok(await findVisit(explained, merchantId, middle, 60), 'the visit is found');
  t.same(partitionsRead(takePlan(), 'visits'), [periods[1]!.name], 'findVisit reads its month only');

  const [context] = await findAttributionContexts(explained, [{ merchantId, visitId: middle, coupon: null }]);
  t.equal(context?.visit?.id, middle, 'attribution finds the visit');
  t.same(partitionsRead(takePlan(), 'visits'), [periods[1]!.name], 'attribution reads its month only');

  t.equal(await findVisit(explained, merchantId, 'vis_not-an-id', 60), undefined, 'no id: nothing read');
  t.equal(takePlan(), '', 'no statement for what is no visit id');

  // The purge's DELETE reads only what is past the retention: here nothing of the partitions ahead.
  await deleteVisitsOlderThan(explained, 400, 100);
  const purge = takePlan();
  t.same(partitionsRead(purge, 'visits'), ['visits_legacy'], 'the purge reads the oldest partition only');
  t.match(purge, /Subplans Removed: 3/, 'the three months ahead pruned');
});

t.test('webhook attempts: a delivery log reads the days since its deliveries were made', async (t) => {
  const periods = await periodsAfterLegacy(webhookAttemptPartitions, 4);
  const endpointId = newId('we');
  await db.sql`insert into webhook_endpoints (id, merchant_id, url, event_types, secret_encrypted)
               values (${endpointId}, ${merchantId}, 'https://example.com/hook', '{affiliate.created}', 'x')`;
  const deliveries: string[] = [];
  for (const [i, p] of periods.entries()) {
    const messageId = newId('msg');
    const deliveryId = newId('dlv');
    const at = new Date(p.from.getTime() + 3_600_000 * 3);
    deliveries.push(deliveryId);
    await db.sql`insert into webhook_messages (id, merchant_id, type, body, created_at)
                 values (${messageId}, ${merchantId}, 'affiliate.created', '{}', ${at})`;
    await db.sql`insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, created_at)
                 values (${deliveryId}, ${messageId}, ${endpointId}, ${merchantId}, 'succeeded', ${at})`;
    for (let n = 0; n < 100 * (i + 1); n++)
      await db.sql`insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms)
                   values (${deliveryId}, ${new Date(at.getTime() + n * 1000)}, 500, 10)`;
  }
  await db.sql`analyze webhook_attempts`;
  takePlan();
  const found = await findDelivery(explained, merchantId, deliveries[2]!);
  t.equal(found?.attempts.length, 300, 'every attempt of the delivery');
  const read = partitionsRead(takePlan(), 'webhook_attempts');
  t.same(
    read,
    periods
      .slice(2)
      .map((p) => p.name)
      .sort(),
    'no partition from before the day of the delivery',
  );
  t.notOk(read.includes('webhook_attempts_legacy'), 'nor the old rows');
});

t.test('key usage: the dashboard reads the months of its last 30 days', async (t) => {
  const periods = await periodsAfterLegacy(keyUsagePartitions, 3);
  const key = (await createKey(db.sql, merchantId, 'read,write')) as { id: string };
  for (const p of periods)
    await db.sql`insert into api_key_usage_daily (key_id, day, requests)
                 select ${key.id}, d::date, 10 from generate_series(${p.from}::timestamptz, ${p.to}::timestamptz - interval '1 day', interval '1 day') d`;
  await db.sql`analyze api_key_usage_daily`;
  takePlan();
  const days = await keyDailyUsage(explained, merchantId, key.id);
  t.equal(days.length, 30);
  const read = partitionsRead(takePlan(), 'api_key_usage_daily');
  t.ok(read.length >= 1 && read.length <= 2, `a month or two of partitions: ${read.join(', ')}`);
  t.notOk(
    periods.some((p) => read.includes(p.name)),
    'none of the months ahead',
  );
});

t.test('outbox: the purge reads only the days that can be past the retention', async (t) => {
  const periods = await periodsAfterLegacy(outboxPartitions, 3);
  for (const p of periods)
    await db.sql`insert into outbox (id, merchant_id, type, data, created_at, published_at)
                 select 'msg_' || ${p.name} || n, ${merchantId}, 'affiliate.created', '{}', ${p.from}, ${p.from}
                 from generate_series(1, 200) n`;
  await db.sql`analyze outbox`;
  takePlan();
  await pruneOutbox(explained, 7, 100);
  const plan = takePlan();
  t.same(partitionsRead(plan, 'outbox'), ['outbox_legacy'], 'the oldest partition only');
  t.match(plan, /Subplans Removed: 3/, 'the three days ahead pruned');
});
