import t from 'tap';
import { newId } from '@platform/shared/ids';
import { periodsFrom } from '@platform/shared/partitions';
import { startPartitionIndexes } from '@platform/events/partition-indexes';
import { conversionEventPartitions } from '@platform/events/queries/conversion-events';
import { missingPartitionIndexes } from '@platform/events/queries/partition-indexes';
import { visitPartitions } from '@platform/events/queries/visits';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { captureLogger, createTestDatabase } from '../helpers/platform.ts';

/**
 * A replica of the previous version, still running during a rolling update, makes the months ahead with the indexes
 * it knows: visits without migration 057's (merchant, created_at, id) and (merchant, affiliate, created_at, id),
 * conversion events without 058's (merchant, visit) and (merchant, affiliate, created_at). The events service's
 * partition maintenance finds every partition from the current month on that lacks one (or has one left invalid by
 * a failed build) and builds it, one at a time; the clicks list then reads that month by its index.
 */
const db = await createTestDatabase(t);
const { sql } = db;
const merchant = (await createMerchant(sql, 'Partition Indexes', 'growth'))!['id'] as string;
const affiliate = newId('aff');
const busy = newId('aff');
await sql`insert into affiliates (id, merchant_id, slug, email, display_name, status)
          values (${affiliate}, ${merchant}, 'jane', 'jane@example.com', 'Jane', 'approved'),
                 (${busy}, ${merchant}, 'ken', 'ken@example.com', 'Ken', 'approved')`;

// Two months as the previous version made them: the last this version makes ahead too, and one further. (In a new
// database the partition of the rows from before partitioning reaches two months ahead.)
const months = [2, 4].map((ahead) => periodsFrom(visitPartitions, new Date(), ahead + 1)[ahead]!);
for (const m of months) {
  const stamp = m.name.slice('visits_p'.length);
  const [from, to] = [m.from.toISOString(), m.to.toISOString()];
  await sql.unsafe(`create table visits_p${stamp} partition of visits for values from ('${from}') to ('${to}')`);
  await sql.unsafe(`create index visits_p${stamp}_merchant_id on visits_p${stamp} (merchant_id, id)`);
  await sql.unsafe(
    `create table conversion_events_p${stamp} partition of conversion_events for values from ('${from}') to ('${to}')`,
  );
  await sql.unsafe(`create index conversion_events_p${stamp}_id on conversion_events_p${stamp} (id)`);
  await sql.unsafe(
    `create index conversion_events_p${stamp}_merchant on conversion_events_p${stamp} (merchant_id, created_at)`,
  );
}
const far = months[1]!;
const farStamp = far.name.slice('visits_p'.length);

// Clicks of that month, so that the plan has rows to choose for: Jane brings one in a hundred.
await sql`
  insert into visits (id, merchant_id, affiliate_id, country, device, created_at, expires_at)
  select 'vis_' || md5(g::text), ${merchant}, case when g % 100 = 0 then ${affiliate} else ${busy} end, 'FR', 'mobile',
         ${far.from}::timestamptz + g * interval '1 minute', ${far.to}::timestamptz
  from generate_series(1, 3000) g`;
// A concurrent build that failed, as one cut off by a restart would: an invalid index under one of the names.
await sql`insert into visits (id, merchant_id, affiliate_id, created_at, expires_at)
          values ('vis_dup', ${merchant}, ${affiliate}, ${far.from}, ${far.to})`;
const failed = await sql
  .unsafe(`create unique index concurrently visits_p${farStamp}_affiliate_created on visits_p${farStamp} (merchant_id)`)
  .then(
    () => null,
    (err: { code?: string }) => err.code,
  );
if (failed !== '23505') throw new Error(`the unique build was to fail on the duplicate, not end with ${failed}`);
await sql.unsafe(`analyze visits_p${farStamp}`);

const listPlan = async (affiliateId?: string) => {
  const rows = await sql.begin(async (tx) => {
    await tx`set local enable_seqscan = off`;
    return tx.unsafe(
      `explain select id, created_at from visits
       where merchant_id = $1 and created_at >= $2 and created_at < $3 ${affiliateId ? 'and affiliate_id = $4' : ''}
       order by created_at desc, id desc limit 25`,
      [merchant, far.from.toISOString(), far.to.toISOString(), ...(affiliateId ? [affiliateId] : [])],
    );
  });
  return rows.map((r) => r['QUERY PLAN'] as string).join('\n');
};

t.test('the months the previous version made lack the indexes, and the list cannot use them', async (t) => {
  const missing = [
    ...(await missingPartitionIndexes(sql, visitPartitions)),
    ...(await missingPartitionIndexes(sql, conversionEventPartitions)),
  ];
  const names = months.flatMap((m) => {
    const s = m.name.slice('visits_p'.length);
    return [
      `visits_p${s}_merchant_created`,
      `visits_p${s}_affiliate_created`,
      `conversion_events_p${s}_visit`,
      `conversion_events_p${s}_affiliate`,
    ];
  });
  t.same(missing.map((m) => m.name).sort(), names.sort(), 'four indexes in each of the two months');
  t.same(
    missing.filter((m) => m.invalid).map((m) => m.name),
    [`visits_p${farStamp}_affiliate_created`],
    'the invalid one is seen as missing',
  );
  t.notMatch(await listPlan(), `visits_p${farStamp}_merchant_created`);
});

t.test('maintenance builds every missing index, valid, and finds nothing the next time', async (t) => {
  const logger = captureLogger('events');
  const worker = startPartitionIndexes({
    sql,
    log: logger.log,
    tables: [visitPartitions, conversionEventPartitions],
  });
  await worker.stop(); // waits for the run it started with
  const built = logger.lines
    .map((l) => JSON.parse(l) as { msg: string; indexes?: string[] })
    .find((l) => l.msg === 'partition indexes built');
  t.equal(built?.indexes?.length, 8, 'eight built, in one run');
  t.same(await missingPartitionIndexes(sql, visitPartitions), [], 'none missing in visits');
  t.same(await missingPartitionIndexes(sql, conversionEventPartitions), [], 'none in conversion events');

  const [rebuilt] = await sql<{ valid: boolean; unique: boolean; definition: string }[]>`
    select i.indisvalid as valid, i.indisunique as unique, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where c.relname = ${`visits_p${farStamp}_affiliate_created`}`;
  t.match(
    rebuilt,
    { valid: true, unique: false, definition: /\(merchant_id, affiliate_id, created_at, id\)$/ },
    'the invalid index dropped and built as the table wants it',
  );
  const [visit] = await sql<{ definition: string }[]>`
    select pg_get_indexdef(c.oid) as definition from pg_class c
    where c.relname = ${`conversion_events_p${farStamp}_visit`}`;
  t.match(visit?.definition, /\(merchant_id, visit_id\) WHERE \(attributed_by = 'cookie'::text\)$/, 'partial, as 058');

  const again = captureLogger('events');
  await startPartitionIndexes({ sql, log: again.log, tables: [visitPartitions, conversionEventPartitions] }).stop();
  t.notOk(
    again.lines.some((l) => l.includes('partition index')),
    'the next run builds nothing',
  );
});

t.test('the clicks list reads the month by the new indexes', async (t) => {
  t.match(await listPlan(), `visits_p${farStamp}_merchant_created`, "a merchant's clicks");
  t.match(await listPlan(affiliate), `visits_p${farStamp}_affiliate_created`, "one affiliate's clicks");
});
