import type { RowPosition } from '@platform/shared/cursor';
import type { Sql } from '@platform/shared/db';
import type postgres from 'postgres';

/** The parameters every /v1 list takes, as Stripe names them. */
export interface ListParams {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
  created?: number | { gt?: number; gte?: number; lt?: number; lte?: number };
}

/** The keyset condition and order of a page (objectIdPage in cursor.ts; tables list by created_at, id). */
export function keyset(
  sql: Sql,
  position: RowPosition,
): { where: postgres.PendingQuery<postgres.Row[]>; order: postgres.PendingQuery<postgres.Row[]> } {
  if (!position) return { where: sql``, order: sql`order by created_at desc, id desc` };
  return position.direction === 'after'
    ? {
        where: sql`and (created_at, id) < (${position.created_at}, ${position.id})`,
        order: sql`order by created_at desc, id desc`,
      }
    : {
        where: sql`and (created_at, id) > (${position.created_at}, ${position.id})`,
        order: sql`order by created_at asc, id asc`,
      };
}

/** `created` as Stripe takes it: a Unix second, or a range of gt / gte / lt / lte. */
export function createdRange(sql: Sql, created: ListParams['created']): postgres.PendingQuery<postgres.Row[]> {
  if (created === undefined) return sql``;
  const at = (s: number) => new Date(s * 1000);
  if (typeof created === 'number') return sql`and created_at >= ${at(created)} and created_at < ${at(created + 1)}`;
  return sql`
    ${created.gt !== undefined ? sql`and created_at >= ${at(created.gt + 1)}` : sql``}
    ${created.gte !== undefined ? sql`and created_at >= ${at(created.gte)}` : sql``}
    ${created.lt !== undefined ? sql`and created_at < ${at(created.lt)}` : sql``}
    ${created.lte !== undefined ? sql`and created_at < ${at(created.lte + 1)}` : sql``}`;
}
