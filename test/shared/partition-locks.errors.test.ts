import t from 'tap';
import { isDatabaseUnavailable, isRolledBackForAnother } from '@platform/shared/db';
import { ensurePartitions, periodsFrom, type PartitionedTable } from '@platform/shared/partitions';
import { createTestDatabase, sleep } from '../helpers/platform.ts';

/**
 * Creating a partition locks its parent and, for its copy of each foreign key, the table the key references. A
 * writer of the referenced table that then reads the parent (the dispatcher inserts a delivery, then reads its
 * attempts) must never meet the maintenance in a deadlock, which Postgres breaks by failing one side: the request's
 * as likely as the maintenance's (shared/src/partitions.ts underPartitionLock). The writer holds on for longer than
 * the maintenance waits each time, as a slow request would: the maintenance tries again until it lets go.
 */
const db = await createTestDatabase(t, { migrated: false });
await db.sql`create table parents (id text primary key)`;
await db.sql`create table children (at timestamptz not null, parent_id text not null references parents (id))
              partition by range (at)`;
const spec: PartitionedTable = { table: 'children', period: 'day', keyType: 'timestamptz', ahead: 1 };

t.test(
  'a writer holding the referenced table reads the parent while its partitions are made: both succeed',
  async (t) => {
    const writer = await db.sql.reserve();
    t.teardown(() => writer.release());
    await writer`begin`;
    await writer`insert into parents (id) values ('p1')`;

    const now = new Date();
    const made = ensurePartitions(db.sql, spec, now).then(
      (names) => ({ names }),
      (err: unknown) => ({ err }),
    );
    // Past the time the maintenance takes to hold the parent and ask for the referenced table: the writer's read
    // then waits on it. The old way held on for its 2 s lock timeout, and Postgres's deadlock check (after 1 s) failed
    // one side; now its wait for the referenced table ends first, and it lets go.
    await sleep(300);
    await t.resolves(writer`select count(*) from children`, "the writer's read of the parent");
    await writer`insert into parents (id) values ('p2')`;
    await writer`commit`;
    t.same(
      await made,
      { names: periodsFrom(spec, now, 2).map((p) => p.name) },
      'the partitions are made once the writer lets go',
    );
    await db.sql`insert into children (at, parent_id) values (${now}, 'p1')`;
    t.pass('a row goes into the new partition, its key checked');
  },
);

t.test(
  'a writer that queued for the parent behind the waiting maintenance, holding the referenced table: both succeed',
  async (t) => {
    // A long read holds the parent, so the maintenance has to wait for it; the writer queues behind that wait.
    const reader = await db.sql.reserve();
    const writer = await db.sql.reserve();
    t.teardown(() => {
      reader.release();
      writer.release();
    });
    await reader`begin`;
    await reader`select count(*) from children`;
    const later = new Date(Date.now() + 10 * 86_400_000);
    const made = ensurePartitions(db.sql, spec, later).then(
      (names) => ({ names }),
      (err: unknown) => ({ err }),
    );
    await sleep(100);
    await writer`begin`;
    await writer`insert into parents (id) values ('p3')`;
    const read = writer`select count(*) from children`.then(
      () => 'read',
      (err: { code?: string }) => err.code,
    );
    // The old way waited up to 2 s for the parent: the long read ending just before the writer's deadlock check (1 s
    // into its wait), it held the parent and waited for the referenced table, and that check found the cycle.
    await sleep(900);
    await reader`commit`;
    t.equal(await read, 'read', "the writer's read of the parent");
    await writer`commit`;
    t.same(await made, { names: periodsFrom(spec, later, 2).map((p) => p.name) }, 'the partitions are made after');
  },
);

t.test(
  'a deadlock that does happen is answered as unavailable (rolled back; a retry succeeds), not internal',
  async (t) => {
    await db.sql`create table pair (id int primary key)`;
    await db.sql`insert into pair values (1), (2)`;
    const [a, b] = [await db.sql.reserve(), await db.sql.reserve()];
    t.teardown(() => {
      a.release();
      b.release();
    });
    await a`begin`;
    await b`begin`;
    await a`update pair set id = id where id = 1`;
    await b`update pair set id = id where id = 2`;
    const outcomes = await Promise.allSettled([
      a`update pair set id = id where id = 2`,
      b`update pair set id = id where id = 1`,
    ]);
    await a`rollback`;
    await b`rollback`;
    const failed = outcomes.filter((o) => o.status === 'rejected').map((o) => o.reason as { code?: string });
    t.equal(failed.length, 1, 'Postgres failed one side');
    t.equal(failed[0]!.code, '40P01');
    t.ok(isDatabaseUnavailable(failed[0]), 'UNAVAILABLE, with Retry-After at the edge');
    t.ok(isRolledBackForAnother(failed[0]), 'and logged as an error, the lock-order bug it usually is');
  },
);
