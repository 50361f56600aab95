import t from 'tap';
import { connectDatabase, type Queryable } from '@platform/shared/db';
import { withCommitHook, withDeadline } from '@platform/shared/deadline';
import { keepReply, markCommitted } from '@platform/shared/idempotent-reply';
import { inOneTrip, inTransaction, inTwoTrips } from '@platform/shared/transactions';
import { captureLogger, createTestDatabase } from '../helpers/platform.ts';

// A keyed request's work marks its Idempotency-Key claim committed in the work's own transaction (the commit hook
// before the deadline check), whichever way the transaction is made: the mark commits with the work or not at all,
// and a claim so marked is never given up, so a retry cannot do committed work again.

const { url, sql: admin } = await createTestDatabase(t);
await admin`create table commit_probe (what text primary key)`;
const sql = connectDatabase(url, { max: 2, applicationName: 'commit-hook-test' });
t.teardown(() => sql.end({ timeout: 1 }));
const { log } = captureLogger('commit-hook-test');

const insert = (tx: Queryable, what: string) => tx`insert into commit_probe (what) values (${what})`.execute();
const read = (tx: Queryable) => tx`select count(*) from commit_probe`.execute();
type Way = (sql: typeof admin, work: (tx: Queryable) => Promise<unknown>) => Promise<unknown>;
const ways: [string, Way][] = [
  ['sql.begin', (sql, work) => sql.begin((tx) => work(tx))],
  [
    'inTransaction',
    (sql, work) =>
      inTransaction(sql, (tx, begun) => Promise.resolve({ result: null, last: Promise.all([begun, work(tx)]) })),
  ],
  ['inOneTrip', (sql, work) => inOneTrip(sql, (tx) => ({ done: work(tx) }))],
  [
    'inTwoTrips',
    (sql, work) =>
      inTwoTrips(
        sql,
        (tx) => tx`select 1`.execute(),
        (tx) => ({ done: work(tx) }),
      ),
  ],
];

let n = 0;
/** A claim as the gateway leaves it for the service: unanswered, this request's. */
async function claim() {
  const key = `k${++n}`;
  const requestId = `req_${n}`;
  await admin`
    insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
    values ('owner', ${key}, '\\x00', ${requestId}, now() + interval '1 minute')`;
  return { claim: { owner: 'owner', key }, requestId };
}
const committedAt = async (key: string) =>
  (await admin<{ at: Date | null }[]>`select committed_at as at from idempotency_keys where key = ${key}`)[0]?.at;

for (const [name, run] of ways) {
  t.test(`${name}: a write marks the claim with the work, a read does not, a rollback takes both back`, async (t) => {
    const written = await claim();
    await withDeadline(Date.now() + 5000, () =>
      withCommitHook(markCommitted(written.claim, written.requestId), () => run(sql, (tx) => insert(tx, `w ${name}`))),
    );
    t.ok(await committedAt(written.claim.key), 'a transaction that wrote marks its claim committed');

    const readOnly = await claim();
    await withDeadline(Date.now() + 5000, () =>
      withCommitHook(markCommitted(readOnly.claim, readOnly.requestId), () => run(sql, read)),
    );
    t.equal(await committedAt(readOnly.claim.key), null, 'a read-only one does not');

    const late = await claim();
    const failed = await withDeadline(Date.now() - 1, () =>
      withCommitHook(markCommitted(late.claim, late.requestId), () => run(sql, (tx) => insert(tx, `late ${name}`))),
    ).then(
      () => null,
      (err: unknown) => err,
    );
    t.match(failed, { code: '57014' }, 'past the deadline it rolls back');
    t.equal(await committedAt(late.claim.key), null, 'and so does the mark');
  });
}

t.test('a claim marked committed is not given up by a later failure; an unmarked one is', async (t) => {
  const marked = await claim();
  await admin`update idempotency_keys set committed_at = now() where key = ${marked.claim.key}`;
  const unmarked = await claim();
  for (const { claim: c, requestId } of [marked, unmarked])
    await keepReply(
      { sql, encryptionKey: Buffer.alloc(32, 7), log },
      c,
      { request_id: requestId, deadline: Date.now() + 5000 },
      {
        done: false,
      },
    );
  t.ok(await committedAt(marked.claim.key), 'the committed claim stays');
  t.equal(await committedAt(unmarked.claim.key), undefined, 'the other is given up');
});
