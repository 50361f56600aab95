import type { Sql } from '@platform/shared/db';
import { withDefaults, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { TermsTier } from '../../../http/commission-terms.ts';

/** What the public programme page shows: the programme found by its slug, with what its terms are computed from. */
export interface PublicProgramme {
  merchantId: string;
  name: string;
  description: string;
  termsUrl: string | null;
  settings: MerchantSettings;
  tiers: TermsTier[];
}

export async function findPublicProgramme(sql: Sql, slug: string): Promise<PublicProgramme | undefined> {
  const [row] = await sql<
    { merchant_id: string; name: string; description: string; terms_url: string | null; settings: unknown }[]
  >`
    select p.merchant_id, m.name, p.description, p.terms_url, m.settings
    from programmes p join merchants m on m.id = p.merchant_id
    where p.slug = ${slug}`;
  if (!row) return undefined;
  const tiers = await sql<TermsTier[]>`
    select name, rate::text as rate, threshold::text as threshold from tiers
    where merchant_id = ${row.merchant_id} order by threshold, created_at, id limit 50`;
  return {
    merchantId: row.merchant_id,
    name: row.name,
    description: row.description,
    termsUrl: row.terms_url,
    settings: withDefaults(row.settings),
    tiers: [...tiers],
  };
}
