import t from 'tap';
import { connectDatabase, isDatabaseUnavailable, type Queryable } from '@platform/shared/db';
import { withDeadline } from '@platform/shared/deadline';
import { inOneTrip, inTransaction, inTwoTrips } from '@platform/shared/transactions';
import { createTestDatabase, sleep } from '../helpers/platform.ts';

// A transaction that answers a caller with a deadline checks it on the server right before COMMIT (migration 025's
// assert_before_deadline): past it, the transaction rolls back, so a 503 from the gateway means "not done".

const { url, sql: admin } = await createTestDatabase(t);
await admin`create table deadline_probe (what text primary key)`;
const sql = connectDatabase(url, { max: 2, applicationName: 'deadline-test' });
t.teardown(() => sql.end({ timeout: 1 }));

const written = async () =>
  (await admin<{ what: string }[]>`select what from deadline_probe order by what`).map((r) => r.what);
const insert = (tx: Queryable, what: string) => tx`insert into deadline_probe (what) values (${what})`.execute();

const ways: [string, (what: string) => Promise<unknown>][] = [
  ['sql.begin', (what) => sql.begin((tx) => insert(tx, what))],
  ['sql.begin answering an array of queries', (what) => sql.begin((tx) => [insert(tx, what)])],
  [
    'inTransaction',
    (what) =>
      inTransaction(sql, (tx, begun) =>
        Promise.resolve({ result: null, last: Promise.all([begun, insert(tx, what)]) }),
      ),
  ],
  ['inOneTrip', (what) => inOneTrip(sql, (tx) => ({ inserted: insert(tx, what) }))],
  [
    'inTwoTrips',
    (what) =>
      inTwoTrips(
        sql,
        (tx) => tx`select 1`.execute(),
        (tx) => ({ inserted: insert(tx, what) }),
      ),
  ],
];

for (const [name, write] of ways) {
  t.test(`${name}: past the caller's deadline at commit, nothing is committed`, async (t) => {
    const what = `late ${name}`;
    // The deadline passes while the transaction's statement waits on a lock another transaction holds.
    const holder = await admin.reserve();
    await holder`begin`;
    await holder`lock table deadline_probe in exclusive mode`;
    const outcome = withDeadline(Date.now() + 200, () => write(what)).then(
      () => null,
      (err: unknown) => err,
    );
    await sleep(400);
    await holder`commit`;
    holder.release();
    const err = await outcome;
    t.match(err, { code: '57014', message: /deadline passed before commit/ });
    t.ok(isDatabaseUnavailable(err), 'answered as UNAVAILABLE (503), never a 500');
    t.notOk((await written()).includes(what), 'rolled back');
  });

  t.test(`${name}: within the deadline, or with no caller, it commits`, async (t) => {
    await withDeadline(Date.now() + 5000, () => write(`in time ${name}`));
    await write(`no caller ${name}`);
    const rows = await written();
    t.ok(rows.includes(`in time ${name}`));
    t.ok(rows.includes(`no caller ${name}`));
  });
}

t.test('every pool has statement_timeout and lock_timeout unless told otherwise', async (t) => {
  const [defaults] = await sql<{ statement: string; lock: string }[]>`
    select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock`;
  t.same(defaults, { statement: '4s', lock: '2s' });
  const quick = connectDatabase(url, { max: 1, statementTimeoutMs: 150, lockTimeoutMs: 100 });
  t.teardown(() => quick.end({ timeout: 1 }));
  const started = Date.now();
  const slow = await quick`select pg_sleep(2)`.catch((err: unknown) => err);
  t.match(slow, { code: '57014' }, 'a statement past statement_timeout is cancelled');
  t.ok(isDatabaseUnavailable(slow));
  const holder = await admin.reserve();
  await holder`begin`;
  await holder`lock table deadline_probe in exclusive mode`;
  const blocked = await quick`insert into deadline_probe (what) values ('blocked')`.catch((err: unknown) => err);
  await holder`rollback`;
  holder.release();
  t.match(blocked, { code: '55P03' }, 'a statement waiting on a lock past lock_timeout fails');
  t.ok(isDatabaseUnavailable(blocked));
  t.ok(Date.now() - started < 1500, 'both within their bounds');
});

t.test("a transaction for no caller (a consumer's batch) waits past the pool's lock_timeout", async (t) => {
  const quick = connectDatabase(url, { max: 2, statementTimeoutMs: 5000, lockTimeoutMs: 100 });
  t.teardown(() => quick.end({ timeout: 1 }));
  const holdFor = async (ms: number, work: () => Promise<unknown>) => {
    const holder = await admin.reserve();
    await holder`begin`;
    await holder`lock table deadline_probe in exclusive mode`;
    const outcome = work().then(
      () => null,
      (err: unknown) => err,
    );
    await sleep(ms);
    await holder`commit`;
    holder.release();
    return outcome;
  };
  t.equal(await holdFor(400, () => quick.begin((tx) => insert(tx, 'background begin'))), null, 'sql.begin waited');
  t.equal(
    await holdFor(400, () => inOneTrip(quick, (tx) => ({ inserted: insert(tx, 'background one trip') }))),
    null,
    'inOneTrip waited',
  );
  t.match(
    await holdFor(400, () => withDeadline(Date.now() + 5000, () => quick.begin((tx) => insert(tx, 'for a caller')))),
    { code: '55P03' },
    "a caller's transaction keeps the pool's lock_timeout",
  );
  const rows = await written();
  t.ok(rows.includes('background begin') && rows.includes('background one trip'));
  t.notOk(rows.includes('for a caller'));
});
