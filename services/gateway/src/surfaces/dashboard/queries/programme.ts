import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';

/** The dashboard's reads and writes of a merchant's programme: its settings and tiers. */
export interface TierRow {
  id: string;
  name: string;
  rate: string;
  threshold: string;
  created_at: Date;
}

/** The merchant's stored settings (without defaults), or undefined for no such merchant. */
export async function storedSettings(sql: Sql, merchantId: string): Promise<unknown> {
  const [row] = await sql<{ settings: unknown }[]>`select settings from merchants where id = ${merchantId}`;
  return row?.settings;
}

export const listTiers = (sql: Sql, merchantId: string) => sql<TierRow[]>`
  select id, name, rate::text, threshold::text, created_at from tiers
  where merchant_id = ${merchantId} order by threshold, created_at, id limit 200`;

export async function insertTier(
  sql: Queryable,
  merchantId: string,
  tier: { name: string; rate: number | string; threshold: number | string },
): Promise<TierRow> {
  const [row] = await sql<TierRow[]>`
    insert into tiers (id, merchant_id, name, rate, threshold)
    values (${newId('tier')}, ${merchantId}, ${tier.name}, ${tier.rate}, ${tier.threshold})
    returning id, name, rate::text, threshold::text, created_at`;
  return row!;
}

/** The programme page's stored settings (migration 063), or undefined before it is set up. */
export interface ProgrammePageRow {
  slug: string;
  description: string;
  terms_url: string | null;
  auto_approve: boolean;
  frame_origins: string[];
}

export async function findProgrammePage(sql: Queryable, merchantId: string): Promise<ProgrammePageRow | undefined> {
  const [row] = await sql<ProgrammePageRow[]>`
    select slug, description, terms_url, auto_approve, frame_origins from programmes where merchant_id = ${merchantId}`;
  return row;
}

/** Creates or replaces the page's settings; a slug another merchant has fails on `programmes_slug_key`. */
export async function upsertProgrammePage(sql: Queryable, merchantId: string, p: ProgrammePageRow): Promise<void> {
  await sql`
    insert into programmes (merchant_id, slug, description, terms_url, auto_approve, frame_origins)
    values (${merchantId}, ${p.slug}, ${p.description}, ${p.terms_url}, ${p.auto_approve}, ${p.frame_origins}::text[])
    on conflict (merchant_id) do update set slug = excluded.slug, description = excluded.description,
      terms_url = excluded.terms_url, auto_approve = excluded.auto_approve, frame_origins = excluded.frame_origins,
      updated_at = date_trunc('milliseconds', now())`;
}

export interface ApplicationRow {
  affiliate_id: string;
  display_name: string;
  email: string;
  website: string | null;
  promotion: string | null;
  parent_id: string | null;
  applied_at: Date;
}

/** The merchant's pending affiliates, newest first, with their applications where the page made them. */
export const listApplications = (sql: Sql, merchantId: string) => sql<ApplicationRow[]>`
  select a.id as affiliate_id, a.display_name, a.email, p.website, p.promotion, a.parent_id, a.created_at as applied_at
  from affiliates a
  left join affiliate_applications p on p.merchant_id = a.merchant_id and p.affiliate_id = a.id
  where a.merchant_id = ${merchantId} and a.status = 'pending'
  order by a.created_at desc, a.id desc limit 200`;
