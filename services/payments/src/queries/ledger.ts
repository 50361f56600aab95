import type { Queryable } from '@platform/shared/db';
import { isExternal, type Movement } from '../domain/ledger-rules.ts';
import type { BalanceTransactionRow } from './transactions.ts';

/** The balance transaction that shows a movement to its holder (written with it). */
export type ShownTransaction = Pick<
  BalanceTransactionRow,
  'id' | 'holder' | 'type' | 'status' | 'available_on' | 'description'
> & { amount: number; fee: number };

/**
 * Writes a movement: its row, its entries, and each inside holder's available balance, in the caller's transaction.
 * Balances are changed in a fixed order (holder) so that concurrent movements never deadlock, and each change is one
 * row update: concurrent movements on one balance queue on its row lock and each sees the one before it. A balance
 * that would go below zero fails the statement (constraint ledger_balance_not_negative), and with it the
 * transaction; an unbalanced movement fails at commit (the deferred trigger ledger_entries_balanced).
 * Only available balances, which payouts take from, are kept as rows. Pending funds are only ever moved out by the
 * availability of what came in, so they need no guard: a pending balance is the sum of its entries (equally, of its
 * pending balance transactions), and concurrent payments to one holder never wait on each other's row lock. Outside
 * parties keep no row either.
 */
export async function postMovement(
  sql: Queryable,
  livemode: boolean,
  source: string,
  movement: Movement,
  shown?: ShownTransaction,
): Promise<string> {
  const { postings, currency } = movement;
  // The movement, its entries and the balance transaction that shows it: one statement, one round trip.
  const [row] = await sql<{ id: string }[]>`
    with m as (
      insert into ledger_movements (livemode, kind, source) values (${livemode}, ${movement.kind}, ${source})
      returning id
    ), e as (
      insert into ledger_entries (movement_id, livemode, holder, currency, bucket, amount)
      select m.id, ${livemode}, p.holder, ${currency}, p.bucket, p.amount
      from m, unnest(${postings.map((p) => p.holder)}::text[], ${postings.map((p) => p.bucket)}::text[],
                     ${postings.map((p) => p.amount)}::bigint[]) as p(holder, bucket, amount)
    ), b as (
      insert into balance_transactions (id, livemode, holder, movement_id, type, amount, fee, net, currency, status,
        available_on, source, description)
      select t.id, ${livemode}, t.holder, m.id, t.type, t.amount, t.fee, t.amount - t.fee, ${currency}, t.status,
        t.available_on, ${source}, t.description
      from m, (values (${shown?.id ?? null}::text, ${shown?.holder ?? null}::text, ${shown?.type ?? null}::text,
        ${shown?.amount ?? 0}::bigint, ${shown?.fee ?? 0}::bigint, ${shown?.status ?? null}::text,
        ${shown?.available_on ?? null}::timestamptz, ${shown?.description ?? null}::text))
        as t(id, holder, type, amount, fee, status, available_on, description)
      where t.id is not null
    )
    select id from m`;
  const id = row!.id;
  const inside = postings
    .filter((p) => !isExternal(p.holder) && p.bucket === 'available')
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

/**
 * Posts movements in order (postMovement), in the caller's transaction, having first locked every inside holder's
 * available balance any of them changes, once each, in postMovement's order (holder). postMovement orders only its own
 * movement's balances: two movements in a row lock in the order they come, so a transaction posting A then B and
 * another posting B then A (a returned payout's credit then its transfer back, against a new affiliate payout's
 * transfer then debit) could each hold one balance while waiting for the other's, and deadlock (40P01). Balances not
 * yet kept as rows have nothing to lock; postMovement creates them.
 */
export async function postMovements(
  sql: Queryable,
  livemode: boolean,
  source: string,
  movements: { movement: Movement; shown?: ShownTransaction }[],
): Promise<string[]> {
  const touched = new Map<string, { holder: string; currency: string }>();
  for (const { movement } of movements)
    for (const p of movement.postings)
      if (!isExternal(p.holder) && p.bucket === 'available')
        // postMovement's sort key (holder and bucket), so that both lock in one order.
        touched.set(`${p.holder}${p.bucket}\u0000${movement.currency}`, {
          holder: p.holder,
          currency: movement.currency,
        });
  const ordered = [...touched.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  for (const { holder, currency } of ordered)
    await sql`
      select 1 from ledger_balances
      where livemode = ${livemode} and holder = ${holder} and currency = ${currency} and bucket = 'available'
      for update`;
  const ids: string[] = [];
  for (const { movement, shown } of movements) ids.push(await postMovement(sql, livemode, source, movement, shown));
  return ids;
}

/** A debit from a balance that has never held anything. */
class BalanceInsufficient extends Error {
  constructor(options?: ErrorOptions) {
    super('the balance does not cover the debit', options);
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
    select currency, 'available' as bucket, amount::text as amount from ledger_balances
    where livemode = ${livemode} and holder = ${holder} and bucket = 'available'
    union all
    select currency, 'pending', sum(net)::text from balance_transactions
    where livemode = ${livemode} and holder = ${holder} and status = 'pending'
    group by currency
    order by 1, 2`;
}
