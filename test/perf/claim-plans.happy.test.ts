import t from 'tap';
import type { Queryable } from '@platform/shared/db';
import { claimDue, clearHints, lockEndpoints } from '@platform/dispatcher/queries/claims';
import { markDueForHint } from '@platform/dispatcher/queries/sweep';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { insertDeliveryRows, insertEndpointRow } from '../helpers/delivery-rows.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * A queue's statistics are often taken while little is active: a burst then finds the planner costing the partial
 * indexes on active deliveries as nearly empty. Statements that name deliveries by id must still find them by
 * primary key, not read every active delivery of every endpoint: otherwise each claim, hint and clear costs time in
 * proportion to the whole backlog (another merchant's included).
 */
const { sql } = await createTestDatabase(t);
// Statistics stay as this test leaves them.
await sql`alter table webhook_deliveries set (autovacuum_enabled = false)`;
const merchantId = (await createMerchant(sql, 'Claim Plans', 'growth'))!['id'] as string;

const endpoint = () => insertEndpointRow(sql, merchantId);
const deliveries = (endpointId: string, count: number, status: 'pending' | 'succeeded') =>
  insertDeliveryRows(sql, merchantId, endpointId, count, status);

/** Index entries of the partial index on active deliveries read by this transaction so far. */
async function activeIndexReads(tx: Queryable): Promise<number> {
  const [row] = await tx<{ n: string }[]>`
    select pg_stat_get_xact_tuples_returned('webhook_deliveries_endpoint_next'::regclass)::text as n`;
  return Number(row!.n);
}

const backlogEndpoint = await endpoint();
const quietEndpoint = await endpoint();
// Statistics taken while nothing was active, then a burst of 4,000 due deliveries for one endpoint.
const backlog = await deliveries(backlogEndpoint, 4000, 'succeeded');
await sql`analyze webhook_deliveries`;
await sql`update webhook_deliveries set status = 'pending', next_attempt_at = now() where id = any(${backlog}::text[])`;

t.test('a claim of another endpoint reads its own deliveries, not the backlog', async (t) => {
  const mine = await deliveries(quietEndpoint, 2, 'pending');
  await sql.begin(async (tx) => {
    await lockEndpoints(tx, [quietEndpoint]);
    const before = await activeIndexReads(tx);
    const claimed = await claimDue(tx, {
      endpointIds: [quietEndpoint],
      limit: 10,
      replicaId: 'test',
      leaseMs: 30_000,
      endpointConcurrency: 16,
    });
    t.same(claimed.map((c) => c.id).sort(), [...mine].sort(), 'both due deliveries leased');
    const read = (await activeIndexReads(tx)) - before;
    t.ok(read < 100, `${read} index entries read (the backlog has 4,000)`);
  });
});

t.test('hints: the sweeper marks by primary key, and clearing them does too', async (t) => {
  await sql.begin(async (tx) => {
    const before = await activeIndexReads(tx);
    const hinted = await markDueForHint(tx, { requeueAfterMs: 30_000, endpointConcurrency: 16, batch: 500 });
    t.equal(hinted.length, 16, "the backlog endpoint's room");
    // Finding the endpoints that have anything due may pass over the due deliveries once (with these statistics
    // the planner does, once per sweep); marking the chosen ones must not read them all again.
    const read = (await activeIndexReads(tx)) - before;
    t.ok(read < 4100, `${read} index entries read by the sweep (the backlog has 4,000)`);

    const beforeClear = await activeIndexReads(tx);
    await clearHints(
      tx,
      hinted.map((h) => h.id),
    );
    const cleared = (
      await tx<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries where id = any(${hinted.map((h) => h.id)}::text[]) and queued_at is null`
    )[0]!.n;
    t.equal(cleared, 16, 'the hints are cleared');
    t.ok((await activeIndexReads(tx)) - beforeClear < 100, 'clearing read by primary key');
  });
});
