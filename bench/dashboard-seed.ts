import type { Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { createUser } from '../scripts/admin/commands.ts';

const DAY_MS = 24 * 3600 * 1000;
const BATCH = 10_000;

/**
 * What the dashboard's pages read, at the size the benchmark asks for, on the seeded merchant (bench/seed.ts made
 * its affiliates): `commissions` commissions over the last 60 days (two levels per order, every status), the
 * conversions behind the last 30 days' orders (processed_conversions, time-sortable event ids as the services make
 * them), per-affiliate totals, an endpoint with 100 deliveries of two attempts each, and a dashboard user.
 * Commissions are made by one INSERT … SELECT over generate_series; conversions in batches of 10,000.
 */
export async function seedDashboard(
  sql: Sql,
  merchantId: string,
  opts: { commissions: number; email: string; password: string; endpointId: string },
): Promise<void> {
  const now = Date.now();
  const [counted] = await sql<
    { n: number }[]
  >`select count(*)::int as n from affiliates where merchant_id = ${merchantId}`;
  const n = counted!.n;
  // The affiliate of each order by its row number: an equality on g alone, so Postgres hash-joins the two sides.
  await sql`
    with a as (select id, (row_number() over (order by id) - 1)::int as rn from affiliates where merchant_id = ${merchantId})
    insert into commissions (id, merchant_id, affiliate_id, event_id, order_id, level, rate, amount, currency, status, held,
                             created_at, approved_at, voided_at, void_reason, paid_at)
    select 'com_' || lpad(to_hex(g), 26, '0'), ${merchantId}, a.id, 'evt_' || lpad(to_hex(g / 2), 26, '0'), 'order-' || (g / 2),
           (g % 2)::smallint, 0.1, ((g % 500) + 1)::numeric / 10, 'USD', s.status, false, s.at,
           case when s.status in ('approved', 'paid') then s.at end,
           case when s.status = 'voided' then s.at end,
           case when s.status = 'voided' then 'refund' end,
           case when s.status = 'paid' then s.at end
    from generate_series(0, ${opts.commissions - 1}) g
    join a on a.rn = (g / 2) % ${n}
    cross join lateral (select (case g % 10 when 0 then 'pending' when 1 then 'voided' when 2 then 'paid' else 'approved' end) as status,
                               to_timestamp((${now} - (g::bigint * ${60 * DAY_MS}) / ${opts.commissions}) / 1000.0) as at) s`;

  // The orders of the last 30 days as the commissions service recorded them (half of the commissions' orders).
  const affiliates = (
    await sql<{ id: string }[]>`select id from affiliates where merchant_id = ${merchantId} order by id`
  ).map((r) => r.id);
  const orders = Math.floor(opts.commissions / 4);
  for (let start = 0; start < orders; start += BATCH) {
    const n = Math.min(BATCH, orders - start);
    const ids: string[] = [];
    const owners: string[] = [];
    const amounts: string[] = [];
    const at: string[] = [];
    for (let i = start; i < start + n; i++) {
      const when = now - Math.floor((i * 30 * DAY_MS) / orders);
      ids.push(newId('evt', when));
      owners.push(affiliates[i % affiliates.length]!);
      amounts.push(String(((i % 500) + 1) * 2));
      at.push(new Date(when).toISOString());
    }
    await sql`
      insert into processed_conversions (merchant_id, event_id, event_type, external_id, affiliate_id, amount, currency,
                                         occurred_at, revenue_counted, processed_at)
      select ${merchantId}, t.id, 'purchase', t.id, t.affiliate, t.amount::numeric, 'USD', t.at::timestamptz, t.amount::numeric, t.at::timestamptz
      from unnest(${ids}::text[], ${owners}::text[], ${amounts}::text[], ${at}::text[]) as t(id, affiliate, amount, at)`;
  }
  await sql`
    insert into affiliate_stats (merchant_id, affiliate_id, currency, attributed_revenue, conversions, updated_at)
    select merchant_id, affiliate_id, currency, sum(amount), count(*), now()
    from processed_conversions where merchant_id = ${merchantId} group by merchant_id, affiliate_id, currency`;

  // The delivery log's 100 rows, each with a failed attempt and a successful one.
  for (let i = 0; i < 100; i++) {
    const when = new Date(now - i * 60_000);
    const message = newId('msg', when.getTime());
    const delivery = newId('dlv', when.getTime());
    await sql`insert into webhook_messages (id, merchant_id, type, body, created_at)
      values (${message}, ${merchantId}, 'tax_form.submitted', ${JSON.stringify({ id: message, type: 'tax_form.submitted', data: {} })}, ${when})`;
    await sql`insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, attempt_count, created_at, updated_at)
      values (${delivery}, ${message}, ${opts.endpointId}, ${merchantId}, 'succeeded', 2, ${when}, ${when})`;
    await sql`insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, response_body)
      values (${delivery}, ${when}, 500, 120, 'upstream error'), (${delivery}, ${when}, 200, 40, 'ok')`;
  }
  await createUser(sql, merchantId, opts.email, opts.password);
  await sql`analyze commissions, processed_conversions, affiliate_stats, webhook_deliveries, webhook_attempts`;
}
