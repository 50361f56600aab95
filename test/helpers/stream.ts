import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { DomainEvent } from '@platform/shared/catalogue';

/** One message as JetStream stored it. */
export interface StreamMessage {
  seq: number;
  subject: string;
  /** The Nats-Msg-Id header (what JetStream de-duplicates on), or null. */
  msgId: string | null;
  /** Every header, as "name: value" lines (for leak checks). */
  headers: string;
  /** The payload as text. */
  text: string;
  envelope: DomainEvent;
}

/** Every message the stream holds now, oldest first, read by sequence with the stream's get API. */
export async function readStream(nc: NatsConnection, stream: string): Promise<StreamMessage[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(stream);
  const out: StreamMessage[] = [];
  if (state.messages === 0) return out;
  for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!m) continue;
    const text = Buffer.from(m.data).toString('utf8');
    const headerLines = m.header ? m.header.keys().flatMap((k) => m.header.values(k).map((v) => `${k}: ${v}`)) : [];
    out.push({
      seq: m.seq,
      subject: m.subject,
      msgId: m.header?.get('Nats-Msg-Id') || null,
      headers: headerLines.join('\n'),
      text,
      envelope: JSON.parse(text) as DomainEvent,
    });
  }
  return out;
}

/** How many messages the stream holds (its own count, independent of reading them). */
export async function streamMessageCount(nc: NatsConnection, stream: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(stream)).state.messages;
}
