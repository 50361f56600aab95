import type { Queryable } from '@platform/shared/db';

/**
 * The portal's own SQL: who an address is (its approved affiliates, across merchants), what the portal shows of the
 * signed-in programme, and the programme's frame origins. Every query names the merchant and the affiliate, or the
 * address, of the session; the figures themselves (commissions, payouts, analytics, payout details, tax forms) come
 * from the services' own operations, never from SQL here.
 */

/** How many programmes one address lists: beyond any real person, bounded anyway. */
const PROGRAMMES_MAX = 100;

export interface ProgrammeOfAddress {
  affiliate_id: string;
  merchant_id: string;
  merchant_name: string;
}

/** Every approved affiliate of an address (lower case), by merchant name. */
export async function approvedAffiliatesOf(sql: Queryable, email: string): Promise<ProgrammeOfAddress[]> {
  return sql<ProgrammeOfAddress[]>`
    select a.id as affiliate_id, a.merchant_id, m.name as merchant_name
    from affiliates a join merchants m on m.id = a.merchant_id
    where lower(a.email) = ${email.toLowerCase()} and a.status = 'approved'
    order by m.name, a.merchant_id
    limit ${PROGRAMMES_MAX}`;
}

export interface ProgrammeView {
  display_name: string;
  status: string;
  slug: string;
  merchant_name: string;
  currency: string;
  programme_slug: string | null;
}

/** What the portal shows of the session's affiliate and its programme. */
export async function programmeView(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
): Promise<ProgrammeView | undefined> {
  const [row] = await sql<ProgrammeView[]>`
    select a.display_name, a.status, a.slug, m.name as merchant_name,
           coalesce(m.settings->>'currency', 'USD') as currency, p.slug as programme_slug
    from affiliates a
    join merchants m on m.id = a.merchant_id
    left join programmes p on p.merchant_id = a.merchant_id
    where a.merchant_id = ${merchantId} and a.id = ${affiliateId}`;
  return row;
}

/** The origins the merchant lets frame the portal (migration 063); none without a programme row. */
export async function frameOriginsOf(sql: Queryable, merchantId: string): Promise<string[]> {
  const [row] = await sql<{ frame_origins: string[] }[]>`
    select frame_origins from programmes where merchant_id = ${merchantId}`;
  return row?.frame_origins ?? [];
}

/** The affiliates recruited by this one: its children in the lineage. */
export async function childrenCount(sql: Queryable, merchantId: string, affiliateId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from affiliates where merchant_id = ${merchantId} and parent_id = ${affiliateId}`;
  return row!.n;
}
