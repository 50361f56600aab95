import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { webhookAttemptSubject, type WebhookAttemptHint } from '@platform/shared/catalogue';
import type { Logger } from '@platform/shared/log';
import { encodeJson } from '@platform/shared/nats';
import type { NewDelivery } from './queries/deliveries.ts';

/**
 * Publishes wake-up hints for deliveries that are due. A hint that fails to publish is not an error to surface:
 * the delivery keeps its queued_at, and the sweeper hints again once WEBHOOK_REQUEUE_AFTER_MS has passed.
 * Bound to NATS once the service has connected (operations are built before that).
 */
export class HintPublisher {
  private js: JetStreamClient | null = null;
  private log: Logger | null = null;

  constructor(private readonly prefix: string) {}

  attach(nc: NatsConnection, log: Logger): void {
    this.js = jetstream(nc);
    this.log = log;
  }

  async publish(deliveries: NewDelivery[]): Promise<void> {
    const js = this.js;
    if (!js || deliveries.length === 0) return;
    const subject = webhookAttemptSubject(this.prefix);
    const results = await Promise.allSettled(
      deliveries.map((d) => {
        const hint: WebhookAttemptHint = { delivery_id: d.id };
        // Same delivery and same hinting moment: a retried publish is stored once.
        return js.publish(subject, encodeJson(hint), { msgID: `${d.id}.${d.queuedAt.getTime()}` });
      }),
    );
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed > 0) this.log?.warn('could not publish delivery hints; the sweeper will', { failed, total: deliveries.length });
  }
}
