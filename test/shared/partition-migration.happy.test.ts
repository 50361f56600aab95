import t from 'tap';
import postgres from 'postgres';
import { newId } from '@platform/shared/ids';
import { partitionsOf } from '@platform/shared/partitions';
import { migrateBefore, migrateFromReplicas } from '../helpers/migrations.ts';
import { createTestDatabase, sleep } from '../helpers/platform.ts';

/**
 * The migrations that partition the tables by time run on a database that has rows, while replicas of the previous
 * version keep writing to those tables, and several replicas migrate at once: every row is kept, the old rows
 * become the first partition as they are, and the writers' statements go on working.
 */
const FIRST_PARTITIONING = '030';
const db = await createTestDatabase(t, { migrated: false });
const later = await migrateBefore(db.sql, FIRST_PARTITIONING);

// The rows of the version before: a merchant, an affiliate, a key, an endpoint and a delivery, and a history.
const merchantId = newId('mer');
const affiliateId = newId('aff');
const keyId = newId('key');
const deliveryId = newId('dlv');
await db.sql`insert into merchants (id, name, plan) values (${merchantId}, 'Before', 'growth')`;
await db.sql`insert into affiliates (id, merchant_id, slug, email, display_name, status)
             values (${affiliateId}, ${merchantId}, 'jane', 'jane@example.com', 'Jane', 'approved')`;
await db.sql`insert into api_keys (id, merchant_id, prefix, key_hash, scopes)
             values (${keyId}, ${merchantId}, 'svc_test', ${Buffer.alloc(32)}, '{read}')`;
const messageId = newId('msg');
const endpointId = newId('we');
await db.sql`insert into webhook_endpoints (id, merchant_id, url, event_types, secret_encrypted)
             values (${endpointId}, ${merchantId}, 'https://example.com/hook', '{affiliate.created}', 'x')`;
await db.sql`insert into webhook_messages (id, merchant_id, type, body, created_at)
             values (${messageId}, ${merchantId}, 'affiliate.created', '{}', now() - interval '40 days')`;
await db.sql`insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status)
             values (${deliveryId}, ${messageId}, ${endpointId}, ${merchantId}, 'retrying')`;
await db.sql`insert into visits (id, merchant_id, affiliate_id, created_at, expires_at)
             select 'vis_old' || n, ${merchantId}, ${affiliateId}, now() - n * interval '1 day', now()
             from generate_series(1, 500) n`;
await db.sql`insert into webhook_attempts (delivery_id, attempted_at, duration_ms)
             select ${deliveryId}, now() - n * interval '1 hour', 5 from generate_series(1, 300) n`;
await db.sql`insert into api_key_usage_daily (key_id, day, requests)
             select ${keyId}, current_date - n, n from generate_series(1, 100) n`;
await db.sql`insert into outbox (id, merchant_id, type, data, created_at, published_at)
             select 'msg_old' || n, ${merchantId}, 'affiliate.created', '{}', now() - n * interval '1 hour', now()
             from generate_series(1, 200) n`;
const [{ maxAttemptId, maxSeq } = { maxAttemptId: '0', maxSeq: '0' }] = await db.sql<
  { maxAttemptId: string; maxSeq: string }[]
>`select (select max(id)::text from webhook_attempts) as "maxAttemptId", (select max(seq)::text from outbox) as "maxSeq"`;

t.test('migrating while the previous version writes, from three replicas at once', async (t) => {
  // A replica of the previous version: the statements it prepared before the migration run on after it.
  const writer = postgres(db.url, { max: 1, onnotice: () => {} });
  t.teardown(() => writer.end({ timeout: 1 }));
  let writing = true;
  const failures: unknown[] = [];
  let written = 0;
  const writes = (async () => {
    while (writing) {
      try {
        await writer`insert into visits (id, merchant_id, affiliate_id, expires_at)
                     values (${newId('vis')}, ${merchantId}, ${affiliateId}, now() + interval '60 days')`;
        await writer`insert into webhook_attempts (delivery_id, attempted_at, duration_ms) values (${deliveryId}, now(), 7)`;
        await writer`insert into api_key_usage_daily (key_id, day, requests) values (${keyId}, (now() at time zone 'utc')::date, 1)
                     on conflict (key_id, day) do update set requests = api_key_usage_daily.requests + excluded.requests`;
        await writer`insert into outbox (id, merchant_id, type, data) values (${newId('msg')}, ${merchantId}, 'affiliate.created', '{}')`;
        written++;
      } catch (err) {
        failures.push(err);
      }
      await sleep(5);
    }
  })();
  await sleep(200);
  const applied = await migrateFromReplicas(t, db.url);
  await sleep(200);
  writing = false;
  await writes;

  t.same(applied.flat().sort(), later, 'each migration applied once, by one replica');
  t.same(failures, [], 'no write of the previous version failed');
  t.ok(written > 10, `the writer went on (${written} rounds)`);

  for (const table of ['visits', 'webhook_attempts', 'api_key_usage_daily', 'outbox']) {
    const [kind] = await db.sql<{ relkind: string }[]>`select relkind from pg_class where relname = ${table}`;
    t.equal(kind!.relkind, 'p', `${table} is partitioned`);
    const [first] = await partitionsOf(db.sql, table);
    t.equal(first!.name, `${table}_legacy`, `${table}: the old table is its first partition`);
    t.equal(first!.from, -Infinity, `${table}: it holds everything before the cut-over`);
  }
  const [counts] = await db.sql<
    { visits: number; attempts: number; usage: number; oldUsage: number; outbox: number }[]
  >`
    select (select count(*)::int from visits where id like 'vis_old%') as visits,
           (select count(*)::int from outbox where id like 'msg_old%') as outbox,
           (select count(*)::int from webhook_attempts where duration_ms = 5) as attempts,
           (select count(*)::int from api_key_usage_daily where day < current_date) as "oldUsage",
           (select count(*)::int from api_key_usage_daily) as usage`;
  t.same(counts, { visits: 500, attempts: 300, oldUsage: 100, usage: 101, outbox: 200 }, 'every old row is kept');
  const [events] = await db.sql<{ n: number }[]>`select count(*)::int as n from outbox where id not like 'msg_old%'`;
  t.equal(events!.n, written, 'every event the writer enqueued, before and after, is in the outbox');
  const [today] = await db.sql<{ requests: string }[]>`
    select requests::text from api_key_usage_daily where key_id = ${keyId} and day = (now() at time zone 'utc')::date`;
  t.equal(Number(today!.requests), written, "the day's counter took every increment, before and after");

  const [next] = await db.sql<{ id: string }[]>`
    insert into webhook_attempts (delivery_id, attempted_at, duration_ms) values (${deliveryId}, now(), 1) returning id::text`;
  t.ok(BigInt(next!.id) > BigInt(maxAttemptId), 'attempt ids go on after the old ones');
  const [row] = await db.sql<{ seq: string }[]>`
    insert into outbox (id, merchant_id, type, data) values (${newId('msg')}, ${merchantId}, 'affiliate.created', '{}')
    returning seq::text`;
  t.ok(BigInt(row!.seq) > BigInt(maxSeq) + BigInt(written), 'outbox seqs go on after the old ones');
});
