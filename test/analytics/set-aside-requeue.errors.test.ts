import t from 'tap';
import { newId } from '@platform/shared/ids';
import { ensurePartitions } from '@platform/shared/partitions';
import { drainAnalyticsPending } from '@platform/events/queries/analytics-pending';
import { requeueSetAsideFacts } from '@platform/events/queries/analytics-set-aside';
import { visitPartitions } from '@platform/events/queries/visits';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { runAdmin, spawnAdmin } from '../helpers/cli.ts';
import { holdRows } from '../helpers/locks.ts';
import { createTestDatabase, eventually } from '../helpers/platform.ts';

/**
 * `npm run -s admin -- analytics requeue`: facts the analytics drain set aside (analytics_set_aside, migration 064)
 * go back to its queue once their cause is fixed, and the drain counts each once. Run twice, or twice at once, a
 * fact is queued once. Here the cause is a merchant that did not exist when the drain took its facts (the rollups'
 * foreign key refused them); creating it is the fix.
 */
const db = await createTestDatabase(t);
const { sql } = db;
const merchant = (await createMerchant(sql, 'Analytics Requeue', 'growth'))!['id'] as string;
const affiliate = newId('aff');
await sql`insert into affiliates (id, merchant_id, slug, email, display_name, status)
          values (${affiliate}, ${merchant}, 'jane', 'jane@example.com', 'Jane', 'approved')`;
await ensurePartitions(sql, visitPartitions);
const admin = (...args: string[]) => runAdmin(db.url, ...args);

/** `n` click facts of `merchantId`, which need not exist; answers their ids. */
const clickFacts = async (merchantId: string, n: number) =>
  (
    await sql<{ id: string }[]>`
      insert into analytics_pending (merchant_id, kind, at, affiliate_id, country, device)
      select ${merchantId}, 'click', now(), ${affiliate}, 'FR', 'mobile' from generate_series(1, ${n})
      returning id::text`
  ).map((r) => r.id);
/** Creates the merchant the facts named: the fix of their cause. */
const fix = (merchantId: string) =>
  sql`insert into merchants (id, name, plan) values (${merchantId}, 'Late merchant', 'growth')`;
const counted = async (merchantId: string) => {
  const [row] = await sql<{ series: number; clicks: number }[]>`
    select (select coalesce(sum(clicks), 0)::int from analytics_series where merchant_id = ${merchantId}) as series,
           (select coalesce(sum(clicks), 0)::int from analytics_clicks where merchant_id = ${merchantId}) as clicks`;
  return row!;
};
const setAsideIds = async (merchantId: string) =>
  (
    await sql<{ id: string }[]>`
      select a.id::text as id from analytics_set_aside a where merchant_id = ${merchantId} order by a.id`
  ).map((r) => r.id);
const pending = async () => (await sql<{ n: number }[]>`select count(*)::int as n from analytics_pending`)[0]!.n;
/** Drain runs until nothing is pending. */
const drainAll = async () => {
  while ((await drainAnalyticsPending(sql, 1000)) > 0);
};

t.test('requeued facts are counted once by the drain; a second requeue moves nothing', async (t) => {
  const late = newId('mer');
  const other = newId('mer');
  const lateFacts = await clickFacts(late, 3);
  const otherFacts = await clickFacts(other, 1);
  await clickFacts(merchant, 2);
  await drainAll();
  t.same(await setAsideIds(late), lateFacts, 'the three facts of the missing merchant set aside');
  t.same(await counted(merchant), { series: 2, clicks: 2 }, 'the rest counted');

  await fix(late);
  const first = await admin('analytics', 'requeue', '--merchant', late);
  t.equal(first.code, 0, first.stderr);
  t.match(first.json, { requeued: 3 });
  t.same(
    first.json.facts.map((f: { id: string }) => f.id),
    lateFacts,
    'each printed, by the id it was set aside with',
  );
  t.match(first.json.facts[0], { merchant_id: late, kind: 'click', error_code: '23503', at: /Z$/ });
  t.same(await setAsideIds(late), [], 'no longer set aside');
  t.same(await setAsideIds(other), otherFacts, "another merchant's left as they were");

  const again = await admin('analytics', 'requeue', '--merchant', late);
  t.equal(again.code, 0, again.stderr);
  t.same(again.json, { requeued: 0, facts: [] }, 'run again: nothing left to move');
  t.equal(await pending(), 3, 'queued once');

  await drainAll();
  t.same(await counted(late), { series: 3, clicks: 3 }, 'counted once');
  await drainAll();
  t.same(await counted(late), { series: 3, clicks: 3 });
  t.same(await setAsideIds(late), []);

  // By id: the one left, of the other merchant, still unfixed, is set aside again by the drain, with the same id.
  const byId = await admin('analytics', 'requeue', '--id', otherFacts[0]!);
  t.match(byId.json, { requeued: 1, facts: [{ id: otherFacts[0], merchant_id: other }] });
  await drainAll();
  t.same(await setAsideIds(other), otherFacts, 'its cause not fixed: set aside again, under the same id');
  t.same(await counted(other), { series: 0, clicks: 0 });
});

t.test('two requeues at once: each fact queued once, by one of them', async (t) => {
  const late = newId('mer');
  const facts = await clickFacts(late, 4);
  await drainAll();
  t.same(await setAsideIds(late), facts);
  await fix(late);

  // analytics_pending held against inserts while both commands start: the one that takes the facts first waits to
  // queue them, holding their rows; the other waits on those rows. Then both go on.
  const release = await holdRows(sql, (tx) => tx`lock table analytics_pending in share mode`);
  const env = { DATABASE_URL: db.url };
  const ids = facts.flatMap((id) => ['--id', id]);
  const runs = Promise.all([
    spawnAdmin(env, 'analytics', 'requeue', '--merchant', late),
    spawnAdmin(env, 'analytics', 'requeue', ...ids),
  ]);
  await eventually(
    async () => {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'admin' and wait_event_type = 'Lock'`;
      return row!.n >= 2 ? true : undefined;
    },
    60_000,
    'both commands waiting',
  );
  await release();
  const [a, b] = await runs;
  t.equal(a.code, 0, a.stderr);
  t.equal(b.code, 0, b.stderr);
  t.same([a.json.requeued, b.json.requeued].sort(), [0, 4], 'one moved all four, the other none');
  t.equal(await pending(), 4, 'each queued once');
  await drainAll();
  t.same(await counted(late), { series: 4, clicks: 4 }, 'counted once');
  t.same(await setAsideIds(late), []);
});

t.test('a requeue stopped half-way moves nothing; the next moves each fact once', async (t) => {
  const late = newId('mer');
  const facts = await clickFacts(late, 3);
  await drainAll();
  t.same(await setAsideIds(late), facts);
  await fix(late);

  // The command's statement in a transaction that fails after it (the process killed, the connection lost before
  // the commit): the facts leave analytics_set_aside and enter analytics_pending together, or neither.
  class StoppedAfter extends Error {}
  const seen = await sql
    .begin(async (tx) => {
      const moved = await requeueSetAsideFacts(tx, { merchantId: late });
      throw new StoppedAfter(String(moved.length));
    })
    .catch((err: unknown) => {
      if (!(err instanceof StoppedAfter)) throw err;
      return Number(err.message);
    });
  t.equal(seen, 3, 'the three taken inside the transaction');
  t.same(await setAsideIds(late), facts, 'all still set aside once it rolled back');
  t.equal(await pending(), 0, 'none queued');

  const retried = await admin('analytics', 'requeue', '--merchant', late);
  t.match(retried.json, { requeued: 3 }, 'the run again moves them');
  await drainAll();
  t.same(await counted(late), { series: 3, clicks: 3 }, 'counted once');
});

t.test('refusals: exit 2 with the reason, nothing moved', async (t) => {
  const late = newId('mer');
  const facts = await clickFacts(late, 1);
  await drainAll();
  for (const [args, reason] of [
    [['--merchant', 'acme'], /--merchant must be a merchant id/],
    [['--id', 'x1'], /--id must be the id of a fact set aside/],
    [['--id', '0'], /--id must be the id of a fact set aside/],
  ] as const) {
    const run = await admin('analytics', 'requeue', ...args);
    t.equal(run.code, 2, args.join(' '));
    t.match(run.stderr, reason);
  }
  t.same(await setAsideIds(late), facts, 'still set aside');
});
