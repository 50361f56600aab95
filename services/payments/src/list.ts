import type { Sql } from '@platform/shared/db';
import { invalidRequest } from '@platform/shared/payments/errors';
import type postgres from 'postgres';

/** Where a page starts: after (older than) or before (newer than) a known object, or at the newest. */
export type Position = { direction: 'after' | 'before'; created_at: Date; id: string } | null;

export interface ListParams {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
  created?: number | { gt?: number; gte?: number; lt?: number; lte?: number };
}

/**
 * Stripe's list envelope over a keyset page, newest first: `starting_after` pages towards older objects and
 * `ending_before` towards newer ones (the page still newest first); `has_more` says whether more lie that way. The
 * cursor object must be one this caller may see (`locate` answers its created time), else 400 resource_missing.
 */
export async function listPage<R extends { created_at: Date; id: string }, T>(opts: {
  params: ListParams;
  url: string;
  locate: (id: string) => Promise<Date | null>;
  fetch: (position: Position, limit: number) => Promise<R[]>;
  present: (row: R) => T;
}): Promise<{ object: 'list'; data: T[]; has_more: boolean; url: string }> {
  const { params } = opts;
  if (params.starting_after !== undefined && params.ending_before !== undefined)
    throw invalidRequest('You may only specify one of these parameters: ending_before, starting_after.', {
      code: 'parameters_exclusive',
      param: 'ending_before',
    });
  const limit = params.limit ?? 10;
  let position: Position = null;
  const cursorId = params.starting_after ?? params.ending_before;
  if (cursorId !== undefined) {
    const param = params.starting_after !== undefined ? 'starting_after' : 'ending_before';
    const created = await opts.locate(cursorId);
    if (!created)
      throw invalidRequest(`No such object: '${cursorId}'`, { code: 'resource_missing', param, status: 400 });
    position = { direction: param === 'starting_after' ? 'after' : 'before', created_at: created, id: cursorId };
  }
  const rows = await opts.fetch(position, limit + 1);
  const has_more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (position?.direction === 'before') page.reverse();
  return { object: 'list', data: page.map(opts.present), has_more, url: opts.url };
}

/** The keyset condition and order of a page (tables list by created_at, id). */
export function keyset(
  sql: Sql,
  position: Position,
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

export const unixSeconds = (d: Date) => Math.floor(d.getTime() / 1000);
