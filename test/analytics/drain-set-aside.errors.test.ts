import t from 'tap';
import { Registry } from 'prom-client';
import { connectDatabase, type Queryable } from '@platform/shared/db';
import { withDeadline } from '@platform/shared/deadline';
import { newId } from '@platform/shared/ids';
import { ensurePartitions } from '@platform/shared/partitions';
import { startAnalyticsDrain } from '@platform/events/analytics-drain';
import { drainAnalyticsPending } from '@platform/events/queries/analytics-pending';
import { visitPartitions } from '@platform/events/queries/visits';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { captureLogger, createTestDatabase, eventually } from '../helpers/platform.ts';

/**
 * A pending fact that no rollup can store (here: one whose merchant does not exist, which the rollups' foreign key
 * refuses) used to fail the drain's one transaction on every run, and analytics stopped for every merchant. The
 * drain now sets it aside (analytics_set_aside, migration 064) with its error, counts the rest of its batch exactly
 * once, logs and counts the fact set aside once, and goes on. An error of the moment (a lock wait given up) sets
 * nothing aside: the facts stay pending for the next run.
 */
const db = await createTestDatabase(t);
const { sql } = db;
const merchant = (await createMerchant(sql, 'Analytics Drain', 'growth'))!['id'] as string;
const affiliate = newId('aff');
await sql`insert into affiliates (id, merchant_id, slug, email, display_name, status)
          values (${affiliate}, ${merchant}, 'jane', 'jane@example.com', 'Jane', 'approved')`;
await ensurePartitions(sql, visitPartitions);

/** Visits of `merchant` now, inserted in `tx`: the trigger appends one pending click fact each. */
const clicks = (tx: Queryable, n: number) =>
  tx`insert into visits (id, merchant_id, affiliate_id, country, device, created_at, expires_at)
     select 'vis_' || md5(random()::text), ${merchant}, ${affiliate}, 'FR', 'mobile', now(), now() + interval '30 days'
     from generate_series(1, ${n})`;
/** A fact the rollups refuse: its merchant does not exist (analytics_clicks' foreign key to merchants). */
const unstorable = async (tx: Queryable) => {
  const [row] = await tx<{ id: string }[]>`
    insert into analytics_pending (merchant_id, kind, at, affiliate_id, country, device)
    values (${newId('mer')}, 'click', now(), ${affiliate}, 'FR', 'mobile') returning id::text`;
  return row!.id;
};
const countedClicks = async () => {
  const [row] = await sql<{ series: number; clicks: number }[]>`
    select (select coalesce(sum(clicks), 0)::int from analytics_series where merchant_id = ${merchant}) as series,
           (select coalesce(sum(clicks), 0)::int from analytics_clicks where merchant_id = ${merchant}) as clicks`;
  return row!;
};
const pending = async () => (await sql<{ n: number }[]>`select count(*)::int as n from analytics_pending`)[0]!.n;
const setAside = () =>
  sql<{ id: string; merchant_id: string; kind: string; error_code: string; error_message: string }[]>`
    select a.id::text as id, merchant_id, kind, error_code, error_message from analytics_set_aside a order by a.id`;

t.test('the drain sets the unstorable fact aside, counts the rest of its batch once, and goes on', async (t) => {
  // One transaction: the bad fact sits between good ones in the drain's first batch.
  const bad = await sql.begin(async (tx) => {
    await clicks(tx, 3);
    const id = await unstorable(tx);
    await clicks(tx, 4);
    return id;
  });
  const logger = captureLogger('events');
  const registry = new Registry();
  const drain = startAnalyticsDrain({ sql, log: logger.log, intervalMs: 100, registry });
  t.teardown(() => drain.stop());

  await eventually(async () => ((await pending()) === 0 ? true : undefined), 10_000, 'every fact taken');
  t.same(await countedClicks(), { series: 7, clicks: 7 }, 'the seven good clicks counted, once');
  const aside = await setAside();
  t.equal(aside.length, 1, 'one fact set aside');
  t.match(aside[0], { id: bad, kind: 'click', error_code: '23503', error_message: /foreign key/ });

  const lines = () =>
    logger.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'analytics fact set aside: no rollup can store it');
  t.match(lines(), [{ level: 'error', fact_id: bad, kind: 'click', error_code: '23503' }], 'logged once');
  t.match(await registry.getSingleMetricAsString('analytics_set_aside_total'), /^analytics_set_aside_total 1$/m);
  t.notOk(
    logger.lines.some((l) => l.includes('analytics drain failed')),
    'no run failed: the bad fact did not stop a drain',
  );

  // The drain goes on: later clicks are counted by the next runs, and the fact set aside is not taken again.
  await sql.begin((tx) => clicks(tx, 5));
  await eventually(async () => ((await countedClicks()).series === 12 ? true : undefined), 10_000, 'later clicks');
  t.same(await countedClicks(), { series: 12, clicks: 12 });
  t.equal(lines().length, 1, 'not logged again');
  t.match(await registry.getSingleMetricAsString('analytics_set_aside_total'), /^analytics_set_aside_total 1$/m);
});

t.test('a batch larger than one retry transaction: every fact after the bad one is counted too', async (t) => {
  const before = (await countedClicks()).series;
  // Two bad facts, at the 20th and the 130th place of a batch of 200: the retry path takes them 50 at a time.
  const bad = await sql.begin(async (tx) => {
    await clicks(tx, 19);
    const first = await unstorable(tx);
    await clicks(tx, 109);
    const second = await unstorable(tx);
    await clicks(tx, 70);
    return [first, second];
  });
  const heard: string[] = [];
  t.equal(await drainAnalyticsPending(sql, 200, (f) => heard.push(f.id)), 200, 'the whole batch taken');
  t.equal(await pending(), 0);
  t.equal((await countedClicks()).series - before, 198, 'the 198 good ones counted');
  t.same(heard, bad, 'each bad one heard of once, after its commit');
  t.same(
    (await setAside()).slice(-2).map((a) => a.id),
    bad,
  );
});

t.test('an error of the moment sets nothing aside: the facts stay pending for the next run', async (t) => {
  const before = await countedClicks();
  const asideBefore = (await setAside()).length;
  await sql.begin((tx) => clicks(tx, 2));
  // A drain whose lock waits give up at once (the pool's 100 ms: a caller's deadline keeps the pool's bounds, where
  // a worker's transaction would wait 30 s), while another transaction holds the rollup's table.
  const impatient = connectDatabase(db.url, { max: 1, applicationName: 'test-drain', lockTimeoutMs: 100 });
  t.teardown(() => impatient.end({ timeout: 1 }));
  const holder = await sql.reserve();
  try {
    await holder`begin`;
    await holder`lock table analytics_clicks in share mode`;
    await t.rejects(
      withDeadline(Date.now() + 10_000, () => drainAnalyticsPending(impatient, 1000)),
      { code: '55P03' },
      'the lock wait fails the run',
    );
  } finally {
    await holder`rollback`;
    holder.release();
  }
  t.equal(await pending(), 2, 'both facts still pending');
  t.equal((await setAside()).length, asideBefore, 'nothing set aside');
  t.equal(await drainAnalyticsPending(impatient, 1000), 2, 'the next run takes them');
  t.equal((await countedClicks()).series, before.series + 2);
});
