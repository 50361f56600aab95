import {
  COMMISSIONS_CONSUMER,
  DISPATCHER_ATTEMPTS_CONSUMER,
  DISPATCHER_FANOUT_CONSUMER,
  PLATFORM_PAYOUT_SUBJECTS,
  SERVICES,
  streamName,
  webhookAttemptSubject,
  type DurableConsumerEntry,
  type ServiceName,
  type StreamKey,
} from './catalogue.ts';
import { userInboxPrefix } from './nats.ts';

/**
 * Who uses which subject of the catalogue (catalogue.ts), process by process: the one source of each process's NATS
 * user and its permissions (`natsPermissions`), written out by `npm run nats:config` (scripts/nats-config.ts) for a
 * nats-server and by the chart for its bundled NATS. A Record over every process, so that a new service cannot be
 * left out. The admin CLI and the migrations use no NATS.
 */
export type NatsClient = ServiceName | 'gateway';
export const NATS_CLIENTS: readonly NatsClient[] = [...SERVICES, 'gateway'];

type SubjectOf = (prefix: string) => string;

export interface NatsAccess {
  /** Request/reply subjects it answers, in its queue group: it subscribes to them and may answer their requesters. */
  serves: SubjectOf[];
  /** Request/reply subjects it sends requests to (wildcards allowed), its replies coming to its inbox. */
  calls: SubjectOf[];
  /** Request/reply subjects it must never send to although `calls` covers them: service-to-service operations. */
  neverCalls: SubjectOf[];
  /** Subjects it publishes into JetStream streams (the acknowledgement comes to its inbox). */
  publishes: SubjectOf[];
  /** The durable consumers it pulls from and keeps in line (topology.ts). */
  consumes: DurableConsumerEntry[];
  /** Whether it creates, updates and checks the catalogue's streams at start and in its topology check. */
  ensuresStreams: boolean;
}

const rpcOf = (service: ServiceName) => (prefix: string) => `${prefix}.rpc.${service}.*`;
const tracking = (prefix: string) => `${prefix}.tracking.*`;
/** Every outbox relay publishes whichever committed row comes next, of any service: domain and conversion events. */
const outboxSubjects: SubjectOf[] = [(prefix) => `${prefix}.domain.>`, (prefix) => `${prefix}.conversion.>`];
/** Called by one service of another, never by the gateway (catalogue: PLATFORM_PAYOUT_SUBJECTS). */
const SERVICE_TO_SERVICE: SubjectOf[] = [PLATFORM_PAYOUT_SUBJECTS.pay, PLATFORM_PAYOUT_SUBJECTS.settled];

export const NATS_ACCESS: Record<NatsClient, NatsAccess> = {
  affiliates: {
    serves: [rpcOf('affiliates')],
    calls: [],
    neverCalls: [],
    publishes: outboxSubjects,
    consumes: [],
    ensuresStreams: true,
  },
  events: {
    serves: [rpcOf('events'), tracking],
    calls: [],
    neverCalls: [],
    publishes: outboxSubjects,
    consumes: [],
    ensuresStreams: true,
  },
  commissions: {
    serves: [rpcOf('commissions')],
    calls: [PLATFORM_PAYOUT_SUBJECTS.pay],
    neverCalls: [],
    publishes: outboxSubjects,
    consumes: [COMMISSIONS_CONSUMER],
    ensuresStreams: true,
  },
  dispatcher: {
    serves: [rpcOf('dispatcher')],
    calls: [],
    neverCalls: [],
    publishes: [webhookAttemptSubject],
    consumes: [DISPATCHER_FANOUT_CONSUMER, DISPATCHER_ATTEMPTS_CONSUMER],
    ensuresStreams: true,
  },
  payments: {
    serves: [rpcOf('payments')],
    calls: [PLATFORM_PAYOUT_SUBJECTS.settled],
    neverCalls: [],
    publishes: [],
    consumes: [],
    ensuresStreams: true,
  },
  gateway: {
    serves: [],
    calls: [...SERVICES.map(rpcOf), tracking],
    neverCalls: SERVICE_TO_SERVICE,
    publishes: [],
    consumes: [],
    ensuresStreams: false,
  },
};

/** The NATS user a process connects as: one per process and NATS_PREFIX, so that environments sharing a server differ. */
export const natsUserName = (client: NatsClient, prefix: string) => `${prefix}-${client}`;

/** A NATS user's permissions, as nats-server's `permissions` block has them. */
export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[] };
  /** May answer the reply subject of a request it received (once, within the server's default time). */
  allow_responses?: boolean;
}

const STREAMS: StreamKey[] = ['DOMAIN_EVENTS', 'CONVERSIONS', 'WEBHOOK_ATTEMPTS'];

/**
 * Replies come to the user's own inbox (`_INBOX.<user>.<random>`, nats.ts connectNats): request answers, JetStream API
 * answers and acknowledgements, the messages of its pulls; no process can subscribe to another's replies. The JetStream API subjects are those the client library sends for what the service
 * does: account info (its check of the API), stream info, create and update of the catalogue's streams, and for
 * each of its consumers their info, create (both forms of the subject), next message and acknowledgements.
 */
export function natsPermissions(client: NatsClient, prefix: string): NatsPermissions {
  const access = NATS_ACCESS[client];
  const of = (subjects: SubjectOf[]) => subjects.map((subject) => subject(prefix));
  const publish = [...of(access.calls), ...of(access.publishes)];
  const usesJetStream = access.ensuresStreams || access.consumes.length > 0;
  if (usesJetStream) publish.push('$JS.API.INFO');
  if (access.ensuresStreams) {
    for (const key of STREAMS) {
      const stream = streamName(prefix, key);
      publish.push(
        `$JS.API.STREAM.INFO.${stream}`,
        `$JS.API.STREAM.CREATE.${stream}`,
        `$JS.API.STREAM.UPDATE.${stream}`,
      );
    }
  }
  for (const consumer of access.consumes) {
    const at = `${streamName(prefix, consumer.stream)}.${consumer.durable_name}`;
    publish.push(
      `$JS.API.CONSUMER.INFO.${at}`,
      `$JS.API.CONSUMER.CREATE.${at}`,
      `$JS.API.CONSUMER.CREATE.${at}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${at}`,
      `$JS.API.CONSUMER.MSG.NEXT.${at}`,
      `$JS.ACK.${at}.>`,
    );
  }
  const neverCalls = of(access.neverCalls);
  return {
    publish: { allow: publish, ...(neverCalls.length ? { deny: neverCalls } : {}) },
    subscribe: { allow: [...of(access.serves), `${userInboxPrefix(natsUserName(client, prefix))}.>`] },
    ...(access.serves.length ? { allow_responses: true } : {}),
  };
}

export interface NatsUser {
  user: string;
  password: string;
  permissions: NatsPermissions;
}

const quoted = (value: string) => JSON.stringify(value);
const list = (values: string[]) => `[${values.map(quoted).join(', ')}]`;

/**
 * nats-server's `authorization { users = [...] }` block (its configuration syntax, 2.9 and later) for these users:
 * a server whose configuration has it refuses any connection without one of them, and holds each to its permissions.
 */
export function authorizationBlock(users: NatsUser[]): string {
  const lines = ['authorization {', '  users = ['];
  for (const { user, password, permissions: p } of users) {
    lines.push(`    {`, `      user: ${quoted(user)}`, `      password: ${quoted(password)}`, `      permissions: {`);
    lines.push(
      `        publish: { allow: ${list(p.publish.allow)}${p.publish.deny ? `, deny: ${list(p.publish.deny)}` : ''} }`,
    );
    lines.push(`        subscribe: { allow: ${list(p.subscribe.allow)} }`);
    if (p.allow_responses) lines.push(`        allow_responses: true`);
    lines.push(`      }`, `    }`);
  }
  lines.push('  ]', '}');
  return lines.join('\n') + '\n';
}
