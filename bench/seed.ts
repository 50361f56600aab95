import type { Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { createKey, createMerchant } from '../scripts/admin/commands.ts';

const BATCH = 10_000;
const DAY_MS = 24 * 3600 * 1000;

/**
 * The benchmark's tenant: an enterprise merchant with `affiliates` affiliates created over the past year (ids carry
 * their created_at, as newId makes them), inserted in batches of 10,000 rows with one INSERT … SELECT FROM unnest
 * each, and `keys` API keys at the highest per-key rate (60,000/min).
 */
export async function seedMerchant(
  sql: Sql,
  opts: { affiliates: number; keys: number },
): Promise<{ merchantId: string; keys: string[] }> {
  const merchant = await createMerchant(sql, 'Bench Merchant', 'enterprise');
  const merchantId = merchant!['id'] as string;

  const end = Date.now() - 60_000;
  const step = Math.max(1, Math.floor((365 * DAY_MS) / opts.affiliates));
  for (let start = 0; start < opts.affiliates; start += BATCH) {
    const n = Math.min(BATCH, opts.affiliates - start);
    const ids: string[] = [];
    const slugs: string[] = [];
    const emails: string[] = [];
    const names: string[] = [];
    const statuses: string[] = [];
    const paid: string[] = [];
    const rates: string[] = [];
    const created: string[] = [];
    for (let j = 0; j < n; j++) {
      const i = start + j;
      const at = end - (opts.affiliates - i) * step;
      ids.push(newId('aff', at));
      slugs.push(`affiliate-${i}`);
      emails.push(`affiliate.${i}@bench.example.com`);
      names.push(`Affiliate ${i}`);
      statuses.push(i % 10 === 0 ? 'pending' : i % 50 === 1 ? 'suspended' : 'approved');
      paid.push((((i * 37) % 100_000) / 4).toFixed(2));
      rates.push(i % 7 === 0 ? '0.15' : '');
      created.push(new Date(at).toISOString());
    }
    await sql`
      insert into affiliates (id, merchant_id, slug, email, display_name, status, lifetime_commissions_paid,
                              custom_commission_rate, created_at, updated_at)
      select t.id, ${merchantId}, t.slug, t.email, t.display_name, t.status, t.paid::numeric,
             nullif(t.rate, '')::numeric, t.created::timestamptz, t.created::timestamptz
      from unnest(${ids}::text[], ${slugs}::text[], ${emails}::text[], ${names}::text[], ${statuses}::text[],
                  ${paid}::text[], ${rates}::text[], ${created}::text[])
        as t(id, slug, email, display_name, status, paid, rate, created)`;
  }
  await sql`analyze affiliates`;

  const keys: string[] = [];
  for (let i = 0; i < opts.keys; i++) keys.push((await createKey(sql, merchantId, 'read,write', 60_000)).key);
  return { merchantId, keys };
}
