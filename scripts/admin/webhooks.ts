import { DOMAIN_EVENT_TYPES, type DomainEventType } from '@platform/shared/catalogue';
import { encryptionKey } from '@platform/shared/config';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { loadDispatcherConfig } from '@platform/dispatcher/config';
import {
  changeEndpoint,
  createEndpoint,
  loadEndpoint,
  replayOne,
  replayRange,
  rotateSecret,
  sendTestEvent,
} from '@platform/dispatcher/endpoints';
import { presentDelivery, presentEndpoint } from '@platform/dispatcher/present';
import { listDeliveries } from '@platform/dispatcher/queries/delivery-log';
import { forgetHints } from '@platform/dispatcher/queries/sweep';
import { deleteEndpoint, listEndpoints } from '@platform/dispatcher/queries/endpoints';
import { addressPolicyOf } from '@platform/dispatcher/service';
import { UsageError } from './commands.ts';

/**
 * Operator commands for webhook endpoints: the dispatcher's own endpoint module, so the URL guard (with the
 * WEBHOOK_ALLOW_HTTP / WEBHOOK_ALLOWED_CIDRS of this environment), secret encryption and replay rules are the API's.
 * Work created here (test events, replays) is left to the dispatchers' sweeper, which picks it up within a second.
 */

export const WEBHOOK_USAGE = `  webhook create <merchant_id> --url U [--events a,b] [--description D] [--threshold N]   prints the secret, once
  webhook list <merchant_id>
  webhook show <endpoint_id>
  webhook update <endpoint_id> [--url U] [--events a,b] [--description D] [--threshold N] [--enabled true|false]
  webhook delete <endpoint_id>
  webhook rotate-secret <endpoint_id>           the old secret keeps signing for 24 hours
  webhook test <endpoint_id> --event TYPE       send a sample event
  webhook deliveries <endpoint_id>              the last 100 deliveries with their attempts
  webhook replay <delivery_id>
  webhook replay-range <endpoint_id> --since ISO --until ISO     every dead-lettered delivery created in the range`;

export interface WebhookOptions {
  url?: string;
  events?: string;
  description?: string;
  threshold?: string;
  enabled?: string;
  event?: string;
  since?: string;
  until?: string;
}

const deps = () => {
  const config = loadDispatcherConfig();
  return { masterKey: encryptionKey(config), policy: addressPolicyOf(config) };
};

/** API errors become one readable line for the operator. */
async function operator<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) {
      const details = (err.details ?? []).map((d) => `${d.path}: ${d.message}`).join('; ');
      throw new UsageError(details ? `${err.message}: ${details}` : err.message, { cause: err });
    }
    throw err;
  }
}

async function merchantOfEndpoint(sql: Sql, endpointId: string): Promise<string> {
  const [row] = isId('we', endpointId)
    ? await sql<{ merchant_id: string }[]>`select merchant_id from webhook_endpoints where id = ${endpointId}`
    : [];
  if (!row) throw new UsageError(`no webhook endpoint ${endpointId}`);
  return row.merchant_id;
}

function eventTypes(list: string | undefined): DomainEventType[] | undefined {
  if (list === undefined) return undefined;
  const types = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = types.filter((t) => !(DOMAIN_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length || types.length === 0)
    throw new UsageError(`--events must name event types from: ${DOMAIN_EVENT_TYPES.join(', ')}`);
  return [...new Set(types)] as DomainEventType[];
}

function threshold(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new UsageError('--threshold must be an integer from 1 to 100');
  return n;
}

function timestamp(value: string | undefined, flag: string): string {
  if (!value || Number.isNaN(Date.parse(value))) throw new UsageError(`${flag} must be an ISO 8601 timestamp`);
  return new Date(value).toISOString();
}

export async function webhookCommand(
  sql: Sql,
  action: string | undefined,
  args: string[],
  o: WebhookOptions,
): Promise<unknown> {
  const arg = (what: string) => {
    if (!args[0]) throw new UsageError(`missing ${what}\n${WEBHOOK_USAGE}`);
    return args[0];
  };
  switch (action) {
    case 'create': {
      const merchantId = arg('<merchant_id>');
      if (!o.url) throw new UsageError('missing --url');
      const [merchant] = await sql`select 1 from merchants where id = ${merchantId}`;
      if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
      return operator(() =>
        createEndpoint(sql, deps(), merchantId, {
          url: o.url!,
          event_types: eventTypes(o.events),
          description: o.description,
          failure_threshold: threshold(o.threshold),
        }),
      );
    }
    case 'list': {
      const rows = await listEndpoints(sql, arg('<merchant_id>'), { limit: 1000 });
      return rows.map(presentEndpoint);
    }
    case 'show': {
      const id = arg('<endpoint_id>');
      return presentEndpoint(await loadEndpoint(sql, await merchantOfEndpoint(sql, id), id));
    }
    case 'update': {
      const id = arg('<endpoint_id>');
      if (o.enabled !== undefined && o.enabled !== 'true' && o.enabled !== 'false')
        throw new UsageError('--enabled must be true or false');
      const body = {
        ...(o.url !== undefined ? { url: o.url } : {}),
        ...(o.events !== undefined ? { event_types: eventTypes(o.events) } : {}),
        ...(o.description !== undefined ? { description: o.description } : {}),
        ...(o.threshold !== undefined ? { failure_threshold: threshold(o.threshold) } : {}),
        ...(o.enabled !== undefined ? { enabled: o.enabled === 'true' } : {}),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError('give at least one of --url, --events, --description, --threshold, --enabled');
      const merchantId = await merchantOfEndpoint(sql, id);
      return operator(() => changeEndpoint(sql, deps(), merchantId, id, body));
    }
    case 'delete': {
      const id = arg('<endpoint_id>');
      await deleteEndpoint(sql, await merchantOfEndpoint(sql, id), id);
      return { deleted: id };
    }
    case 'rotate-secret': {
      const id = arg('<endpoint_id>');
      const merchantId = await merchantOfEndpoint(sql, id);
      return operator(() => rotateSecret(sql, deps(), merchantId, id));
    }
    case 'test': {
      const id = arg('<endpoint_id>');
      const type = eventTypes(o.event);
      if (!type || type.length !== 1) throw new UsageError('--event must name one event type');
      const merchantId = await merchantOfEndpoint(sql, id);
      const { delivery, created } = await operator(() => sendTestEvent(sql, merchantId, id, type[0]!));
      await forgetHints(sql, created);
      return delivery;
    }
    case 'deliveries': {
      const id = arg('<endpoint_id>');
      const rows = await listDeliveries(sql, await merchantOfEndpoint(sql, id), id, { limit: 100 });
      return rows.map((r) => presentDelivery(r.delivery, r.attempts));
    }
    case 'replay': {
      const id = arg('<delivery_id>');
      const [row] = isId('dlv', id)
        ? await sql<{ merchant_id: string }[]>`select merchant_id from webhook_deliveries where id = ${id}`
        : [];
      if (!row) throw new UsageError(`no webhook delivery ${id}`);
      const replayed = await operator(() => replayOne(sql, row.merchant_id, id));
      await forgetHints(sql, replayed);
      return { replayed: replayed.length };
    }
    case 'replay-range': {
      const id = arg('<endpoint_id>');
      const since = timestamp(o.since, '--since');
      const until = timestamp(o.until, '--until');
      const merchantId = await merchantOfEndpoint(sql, id);
      const replayed = await operator(() => replayRange(sql, merchantId, id, since, until));
      await forgetHints(sql, replayed);
      return { replayed: replayed.length };
    }
    default:
      throw new UsageError(`usage: npm run admin -- webhook <command>\n${WEBHOOK_USAGE}`);
  }
}
