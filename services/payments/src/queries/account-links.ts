import type { Queryable } from '@platform/shared/db';

export interface AccountLinkRow {
  account_id: string;
  livemode: boolean;
  refresh_url: string;
  return_url: string;
  expires_at: Date;
  opened_at: Date | null;
  submitted_at: Date | null;
}

export async function insertAccountLink(
  sql: Queryable,
  l: {
    token_hash: Buffer;
    account_id: string;
    livemode: boolean;
    refresh_url: string;
    return_url: string;
    ttlSeconds: number;
  },
): Promise<{ created_at: Date; expires_at: Date }> {
  const [row] = await sql<{ created_at: Date; expires_at: Date }[]>`
    insert into payment_account_links (token_hash, account_id, livemode, refresh_url, return_url, expires_at)
    values (${l.token_hash}, ${l.account_id}, ${l.livemode}, ${l.refresh_url}, ${l.return_url},
            date_trunc('milliseconds', now()) + ${l.ttlSeconds} * interval '1 second')
    returning created_at, expires_at`;
  return row!;
}

export async function findAccountLink(sql: Queryable, tokenHash: Buffer, lock = false) {
  const [row] = await sql<AccountLinkRow[]>`
    select account_id, livemode, refresh_url, return_url, expires_at, opened_at, submitted_at
    from payment_account_links where token_hash = ${tokenHash} ${lock ? sql`for update` : sql``}`;
  return row;
}

/** Opens the link once: true for the one request that opened it while it was unexpired and unopened. */
export async function openAccountLink(sql: Queryable, tokenHash: Buffer): Promise<boolean> {
  const rows = await sql`
    update payment_account_links set opened_at = now()
    where token_hash = ${tokenHash} and opened_at is null and submitted_at is null and expires_at > now()
    returning 1`;
  return rows.length === 1;
}

export async function markSubmitted(sql: Queryable, tokenHash: Buffer): Promise<void> {
  await sql`update payment_account_links set submitted_at = now() where token_hash = ${tokenHash}`;
}
