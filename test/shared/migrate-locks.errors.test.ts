import t from 'tap';
import postgres from 'postgres';
import { migrate } from '@platform/shared/migrate';
import { migrateBefore } from '../helpers/migrations.ts';
import { createTestDatabase, sleep } from '../helpers/platform.ts';

/**
 * A migration that needs a lock a running replica holds, while that replica's next statement needs a lock the
 * migration holds, is a lock cycle. The migration's lock waits are short, so it is the one that gives up: it is
 * rolled back, starts again, and applies once the replica is done; the replica's statements never fail.
 * Migration 041 (conversion events partitioned) holds locks on affiliates and, attaching the old table, waits for an
 * exclusive one on merchants, which any insert checking a foreign key to merchants holds a share of.
 */
const db = await createTestDatabase(t, { migrated: false });
const later = await migrateBefore(db.sql, '041');

async function waitingForMerchants(sql: postgres.Sql): Promise<boolean> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_locks
    where relation = 'merchants'::regclass and mode = 'AccessExclusiveLock' and not granted`;
  return row!.n > 0;
}

t.test(
  'a replica holding a lock the migration needs, and waiting on one it holds, goes on; the migration retries',
  async (t) => {
    const replica = postgres(db.url, { max: 1, onnotice: () => {} });
    const observer = postgres(db.url, { max: 1, onnotice: () => {} });
    t.teardown(() => Promise.all([replica.end({ timeout: 1 }), observer.end({ timeout: 1 })]));
    const migrator = postgres(db.url, { max: 1, onnotice: () => {} });
    t.teardown(() => migrator.end({ timeout: 1 }));

    let replicaError: unknown = null;
    let migrating: Promise<string[]> | undefined;
    await replica
      .begin(async (tx) => {
        // What a foreign-key check of an insert takes on the table it references.
        await tx`lock table merchants in row share mode`;
        migrating = migrate(migrator);
        let seen = false;
        for (let i = 0; i < 500 && !seen; i++) {
          seen = await waitingForMerchants(observer);
          if (!seen) await sleep(5);
        }
        t.ok(seen, 'the migration waits for merchants, holding its locks on affiliates');
        // The replica's next foreign-key check, on affiliates: a cycle with the waiting migration.
        await tx`lock table affiliates in row share mode`;
        // Held longer than several of the migration's lock waits.
        await sleep(1_500);
      })
      .catch((err: unknown) => {
        replicaError = err;
      });
    t.equal(replicaError, null, "the replica's transaction was never chosen to fail");
    const applied = await migrating!;
    t.same(applied, later, 'every migration from 041 on applied, once');
    const [kind] = await db.sql<
      { relkind: string }[]
    >`select relkind from pg_class where relname = 'conversion_events'`;
    t.equal(kind!.relkind, 'p', 'conversion_events is partitioned');
  },
);

t.test('a lock held longer than every short wait: the migration waits it out and applies', async (t) => {
  const fresh = await createTestDatabase(t, { migrated: false });
  const tail = await migrateBefore(fresh.sql, '061');
  const holder = postgres(fresh.url, { max: 1, onnotice: () => {} });
  const migrator = postgres(fresh.url, { max: 1, onnotice: () => {} });
  t.teardown(() => Promise.all([holder.end({ timeout: 1 }), migrator.end({ timeout: 1 })]));
  let released = false;
  const holding = holder.begin(async (tx) => {
    // 061 builds an index on analytics_conversions, which waits for a writer in flight there.
    await tx`lock table analytics_conversions in row exclusive mode`;
    await sleep(2_500);
    released = true;
  });
  const applied = await migrate(migrator);
  t.ok(released, 'it applied only after the lock was released');
  t.same(applied, tail, 'the waiting migration applied');
  await holding;
});

t.test('a replica starting on an up-to-date database neither waits for the migration lock nor applies', async (t) => {
  const current = await createTestDatabase(t);
  const holder = postgres(current.url, { max: 1, onnotice: () => {} });
  t.teardown(() => holder.end({ timeout: 1 }));
  // MIGRATION_LOCK of shared/src/migrate.ts, held as a replica applying a long migration holds it.
  await holder`select pg_advisory_lock(7241019)`;
  const outcome = await Promise.race([migrate(current.sql), sleep(3_000).then(() => 'waited for the lock')]);
  t.same(outcome, [], 'nothing to apply, answered while the lock is held');
  await holder`select pg_advisory_unlock_all()`;
});
