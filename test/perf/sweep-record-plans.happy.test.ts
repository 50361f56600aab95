import t, { type Test } from 'tap';
import type { Queryable } from '@platform/shared/db';
import { recordAttempts, type AttemptRecord } from '@platform/dispatcher/queries/attempts';
import { claimDue, lockEndpoints } from '@platform/dispatcher/queries/claims';
import { deadLetterDueOfDisabled } from '@platform/dispatcher/queries/sweep';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { insertDeliveryRows, insertEndpointRow } from '../helpers/delivery-rows.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * Recording attempts and the sweeper's dead-lettering run all the time, on a table that grows by a row per delivery.
 * A prepared statement's generic plan (Postgres switches to it after five runs) is kept until the table's statistics
 * change: on a server without autovacuum, or between its visits, it was made for a smaller table or for a moment when
 * little was active. The benchmark's database is in this state (analyzed after its warm-up of 600 deliveries), and
 * there these two statements read the whole table, or every active delivery, on every call. Both must reach only
 * the rows they are about, whatever the statistics.
 */
const { sql } = await createTestDatabase(t);
// Statistics stay as this test leaves them.
await sql`alter table webhook_deliveries set (autovacuum_enabled = false)`;
const merchantId = (await createMerchant(sql, 'Sweep Record Plans', 'growth'))!['id'] as string;

const endpoint = (enabled = true) => insertEndpointRow(sql, merchantId, enabled);
const deliveries = (
  endpointId: string,
  count: number,
  status: 'pending' | 'succeeded',
  lockedBy: string | null = null,
) => insertDeliveryRows(sql, merchantId, endpointId, count, status, lockedBy);

/** Rows of webhook_deliveries returned by sequential scans, and entries of the active-deliveries index read, so far. */
async function reads(tx: Queryable): Promise<{ seq: number; active: number }> {
  const [row] = await tx<{ seq: string; active: string }[]>`
    select pg_stat_get_xact_tuples_returned('webhook_deliveries'::regclass)::text as seq,
           pg_stat_get_xact_tuples_returned('webhook_deliveries_endpoint_next'::regclass)::text as active`;
  return { seq: Number(row!.seq), active: Number(row!.active) };
}

const succeeded = (id: string): AttemptRecord => ({
  delivery: { id, endpoint_id: '' },
  outcome: {
    attemptedAt: new Date(),
    statusCode: 200,
    error: null,
    durationMs: 3,
    responseBody: 'ok',
    retryAfterMs: null,
  },
  verdict: { kind: 'succeeded' },
  attemptsMade: 1,
});

/** A connection of its own that uses generic plans from the first run, as Postgres does after five; reset when done. */
async function genericPlanConnection(t: Test) {
  const conn = await sql.reserve();
  t.teardown(async () => {
    await conn`reset plan_cache_mode`;
    conn.release();
  });
  await conn`set plan_cache_mode = force_generic_plan`;
  return conn;
}

const busyEndpoint = await endpoint();
// Statistics of a table of 600 deliveries, all finished: as the benchmark analyzes after its warm-up.
await deliveries(busyEndpoint, 600, 'succeeded');
await sql`analyze webhook_deliveries`;

t.test('attempts are recorded by primary key under a generic plan made when the table was small', async (t) => {
  const conn = await genericPlanConnection(t);
  // Prepares the statement while the table has the 600 rows of its statistics, in a transaction as the dispatcher
  // records attempts.
  const first = await deliveries(busyEndpoint, 5, 'pending', 'replica-a');
  await conn`begin`;
  await recordAttempts(conn, first.map(succeeded), 'replica-a');
  await conn`commit`;

  await deliveries(busyEndpoint, 6000, 'succeeded');
  const batch = await deliveries(busyEndpoint, 20, 'pending', 'replica-a');
  await conn`begin`;
  const before = await reads(conn);
  await recordAttempts(conn, batch.map(succeeded), 'replica-a');
  const scanned = (await reads(conn)).seq - before.seq;
  await conn`commit`;
  t.ok(scanned < 100, `${scanned} rows read by sequential scans (the table has 6,625)`);

  const [attempts] = await sql<
    { n: number }[]
  >`select count(*)::int as n from webhook_attempts where delivery_id = any(${batch}::text[])`;
  t.equal(attempts!.n, 20, 'one attempt row per delivery');
  const states = await sql<{ status: string; locked_by: string | null }[]>`
    select distinct status, locked_by from webhook_deliveries where id = any(${batch}::text[])`;
  t.same(states, [{ status: 'succeeded', locked_by: null }], 'every delivery succeeded and released its lease');
});

t.test(
  "the sweeper dead-letters a disabled endpoint's due deliveries without reading an enabled one's backlog",
  async (t) => {
    const conn = await genericPlanConnection(t);
    const backlogEndpoint = await endpoint();
    // A backlog of another endpoint, due now, unknown to the statistics (taken while nothing was active).
    await deliveries(backlogEndpoint, 4000, 'pending');
    const disabled = await endpoint(false);
    const due = await deliveries(disabled, 3, 'pending');
    const leased = await deliveries(disabled, 1, 'pending', 'replica-b');

    await conn`begin`;
    const before = await reads(conn);
    const count = await deadLetterDueOfDisabled(conn);
    const after = await reads(conn);
    await conn`commit`;
    t.equal(count, 3, "the disabled endpoint's three due, unleased deliveries");
    t.ok(
      after.active - before.active < 100,
      `${after.active - before.active} active-index entries read (the backlog has 4,000)`,
    );
    t.ok(after.seq - before.seq < 100, `${after.seq - before.seq} rows read by sequential scans`);

    const rows = await sql<{ id: string; status: string; dead_letter_reason: string | null }[]>`
    select id, status, dead_letter_reason from webhook_deliveries where endpoint_id = ${disabled} order by id`;
    t.same(
      rows.filter((r) => due.includes(r.id)).map((r) => [r.status, r.dead_letter_reason]),
      Array(3).fill(['dead_lettered', 'endpoint_disabled']),
    );
    t.same(
      rows.filter((r) => leased.includes(r.id)).map((r) => r.status),
      ['pending'],
      'a leased delivery is left to its attempt',
    );
    const [backlog] = await sql<
      { n: number }[]
    >`select count(*)::int as n from webhook_deliveries where endpoint_id = ${backlogEndpoint} and status = 'pending'`;
    t.equal(backlog!.n, 4000, "the enabled endpoint's backlog is untouched");
  },
);

t.test("claims keep one generic plan when the statistics know of another endpoint's backlog", async (t) => {
  // The backlog of the test above, now in the statistics, as after the benchmark's ANALYZE of its 503 backlog.
  await sql`analyze webhook_deliveries`;
  const quiet = await endpoint();
  const conn = await sql.reserve();
  t.teardown(() => conn.release());
  let claimed = 0;
  for (let i = 0; i < 8; i++) {
    await deliveries(quiet, 1, 'pending');
    await conn`begin`;
    await lockEndpoints(conn, [quiet]);
    claimed += (
      await claimDue(conn, {
        endpointIds: [quiet],
        limit: 4,
        replicaId: 'replica-c',
        leaseMs: 30_000,
        endpointConcurrency: 16,
      })
    ).length;
    await conn`commit`;
  }
  t.equal(claimed, 8, "each call claims the quiet endpoint's new delivery");
  const [plans] = await conn<{ generic_plans: string; custom_plans: string }[]>`
    select generic_plans::text, custom_plans::text from pg_prepared_statements
    where statement like '%with room as materialized%' and statement not like '%pg_prepared_statements%'`;
  // Planned afresh on every call, the claim spent several times its execution in planning.
  t.same(plans, { generic_plans: '8', custom_plans: '0' }, 'the generic plan, made once, for every call');
});
