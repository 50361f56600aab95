import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { webhookAttemptSubject, type WebhookAttemptHint } from '@platform/shared/catalogue';
import type { Logger } from '@platform/shared/log';
import { encodeJson } from '@platform/shared/nats';
import type { Sql } from '@platform/shared/db';
import type { Topology } from '@platform/shared/topology';
import type { NewDelivery } from './queries/fan-out.ts';
import { forgetHints } from './queries/sweep.ts';
import { context, endWithError, trace, tracingEnabled } from '@platform/shared/tracing/context';
import { startProducerSpan } from '@platform/shared/tracing/nats';

/**
 * Publishes wake-up hints for deliveries that are due. A hint that fails to publish is not an error to surface:
 * its delivery's hint is forgotten in Postgres, so the sweeper's next pass takes it up (and attempts it itself while
 * hints cannot be published), and the topology check looks for a missing stream at once.
 * Bound to NATS once the service has connected (operations are built before that).
 */
export class HintPublisher {
  private js: JetStreamClient | null = null;
  private log: Logger | null = null;
  private recovery: { sql: Sql; topology: Topology } | null = null;

  private readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** `recovery`: where a failed hint is forgotten and who looks for the missing stream (the dispatcher's own). */
  attach(nc: NatsConnection, log: Logger, recovery?: { sql: Sql; topology: Topology }): void {
    this.js = jetstream(nc);
    this.log = log;
    this.recovery = recovery ?? null;
  }

  /** Resolves with the deliveries whose hint could not be published. */
  async publish(deliveries: NewDelivery[]): Promise<NewDelivery[]> {
    const js = this.js;
    if (!js || deliveries.length === 0) return [];
    const subject = webhookAttemptSubject(this.prefix);
    // Hints published for a request (a replay, a test event) carry its trace; the sweeper's start none.
    const active = tracingEnabled() && trace.getSpan(context.active()) ? context.active() : null;
    const results = await Promise.allSettled(
      deliveries.map((d) => {
        const hint: WebhookAttemptHint = { delivery_id: d.id };
        // Same delivery and same hinting moment: a retried publish is stored once.
        const msgID = `${d.id}.${d.queuedAt.getTime()}`;
        const traced = active ? startProducerSpan(subject, active, undefined, msgID) : null;
        if (!traced) return js.publish(subject, encodeJson(hint), { msgID });
        return js.publish(subject, encodeJson(hint), { msgID, headers: traced.headers }).then(
          (ack) => {
            traced.span.end();
            return ack;
          },
          (err: unknown) => {
            endWithError(traced.span, err);
            throw err;
          },
        );
      }),
    );
    const failed = deliveries.filter((_d, i) => results[i]!.status === 'rejected');
    if (failed.length === 0) return [];
    this.log?.warn('could not publish delivery hints; the sweeper will', {
      failed: failed.length,
      total: deliveries.length,
    });
    if (this.recovery) {
      void this.recovery.topology.check();
      await forgetHints(this.recovery.sql, failed).catch(() => {});
    }
    return failed;
  }
}
