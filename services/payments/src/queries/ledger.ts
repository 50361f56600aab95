import type { Queryable } from '@platform/shared/db';
import { isExternal, type Movement } from '../ledger-rules.ts';

/**
 * Writes a movement: its row, its entries, and each inside holder's balance, in the caller's transaction. Balances
 * are changed in a fixed order (holder, bucket) so that concurrent movements never deadlock, and each change is one
 * row update: concurrent movements on one balance queue on its row lock and each sees the one before it. A balance
 * that would go below zero fails the statement (constraint ledger_balance_not_negative), and with it the
 * transaction; an unbalanced movement fails at commit (the deferred trigger ledger_entries_balanced). Outside
 * parties keep no balance row: their balance is the sum of their entries, and no payment waits on a row of theirs.
 */
export async function postMovement(
  sql: Queryable,
  livemode: boolean,
  source: string,
  movement: Movement,
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into ledger_movements (livemode, kind, source) values (${livemode}, ${movement.kind}, ${source})
    returning id`;
  const id = row!.id;
  const { postings, currency } = movement;
  await sql`
    insert into ledger_entries (movement_id, livemode, holder, currency, bucket, amount)
    select ${id}, ${livemode}, holder, ${currency}, bucket, amount
    from unnest(${postings.map((p) => p.holder)}::text[], ${postings.map((p) => p.bucket)}::text[],
                ${postings.map((p) => p.amount)}::bigint[]) as p(holder, bucket, amount)`;
  const inside = postings
    .filter((p) => !isExternal(p.holder))
    .sort((a, b) => (a.holder + a.bucket < b.holder + b.bucket ? -1 : 1));
  for (const p of inside) {
    // A debit is an update only: an upsert would first check its would-be new row (a negative amount) and fail.
    if (p.amount < 0) {
      const updated = await sql`
        update ledger_balances set amount = amount + ${p.amount}
        where livemode = ${livemode} and holder = ${p.holder} and currency = ${currency} and bucket = ${p.bucket}
        returning 1`;
      if (updated.length === 0) throw new BalanceInsufficient();
    } else {
      await sql`
        insert into ledger_balances (livemode, holder, currency, bucket, amount)
        values (${livemode}, ${p.holder}, ${currency}, ${p.bucket}, ${p.amount})
        on conflict (livemode, holder, currency, bucket) do update set amount = ledger_balances.amount + excluded.amount`;
    }
  }
  return id;
}

/** A debit from a balance that has never held anything. */
class BalanceInsufficient extends Error {
  constructor() {
    super('the balance does not cover the debit');
  }
}

/** True for the refusal of a balance that would have gone below zero. */
export function isBalanceInsufficient(err: unknown): boolean {
  if (err instanceof BalanceInsufficient) return true;
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === '23514' && e.constraint_name === 'ledger_balance_not_negative';
}

export async function balances(sql: Queryable, livemode: boolean, holder: string) {
  return sql<{ currency: string; bucket: 'available' | 'pending'; amount: string }[]>`
    select currency, bucket, amount from ledger_balances
    where livemode = ${livemode} and holder = ${holder} order by currency, bucket`;
}
