import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestLike } from './platform.ts';

/** A mail as the SMTP server received it: the envelope and the raw message. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  messageId: string | undefined;
}

/**
 * A real SMTP server in this process on a loopback port (the `smtp-server` package), for the dispatcher's SMTP_URL.
 * `refuseNext(code, n)` makes the next n messages be answered with that code (451: try later; 550: refused).
 */
export async function startSmtpServer(t: TestLike) {
  const received: ReceivedMail[] = [];
  const refusals: number[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = refusals.shift();
        if (code !== undefined) {
          callback(
            Object.assign(new Error(code >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: code }),
          );
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          messageId: /^Message-ID:\s*(\S+)/im.exec(raw)?.[1],
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    refuseNext(code: number, n = 1) {
      for (let i = 0; i < n; i++) refusals.push(code);
    },
    /** Waits until `n` mails have arrived (or fails after `ms`). */
    async waitFor(n: number, ms = 15_000): Promise<ReceivedMail[]> {
      const until = Date.now() + ms;
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} mails, got ${received.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return received;
    },
  };
}

/** The links of a mail's plain-text part (quoted-printable soft breaks undone). */
export function linksOf(raw: string): string[] {
  const unfolded = raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  return [...new Set(unfolded.match(/https?:\/\/[^\s"<>]+/g) ?? [])];
}
