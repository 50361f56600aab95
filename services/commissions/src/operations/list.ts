import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { CommissionsDeps } from '../deps.ts';
import { presentCommission } from '../present.ts';
import { clawbacksOf, type ClawbackRow } from '../queries/clawbacks.ts';
import { listCommissions } from '../queries/commissions.ts';

export const listCommissionsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.listCommissions, async (ctx, { query }) => {
    let clawbacks = new Map<string, ClawbackRow>();
    return {
      outcome: 'ok',
      body: await keysetPage({
        key: deps.cursorKey,
        scope: {
          merchantId: ctx.merchantId,
          list: 'commissions',
          filters: { status: query.status ?? null, affiliate_id: query.affiliate_id ?? null },
        },
        cursor: query.cursor,
        limit: query.limit ?? 25,
        fetch: async (after, limit) => {
          const rows = await listCommissions(ctx.sql, ctx.merchantId, {
            status: query.status,
            affiliateId: query.affiliate_id,
            after,
            limit,
          });
          // Only voided commissions can have a clawback: most pages ask for none.
          const voided = rows.filter((r) => r.status === 'voided').map((r) => r.id);
          if (voided.length > 0) clawbacks = await clawbacksOf(ctx.sql, ctx.merchantId, voided);
          return rows;
        },
        present: (row) => presentCommission(row, clawbacks.get(row.id)),
      }),
    };
  });
