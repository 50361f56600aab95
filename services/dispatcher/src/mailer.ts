import { createTransport } from 'nodemailer';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { MAIL_NOTIFY_CHANNEL, openMailContent, type MailContent } from '@platform/shared/mail';
import { startPeriodicPurge } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/service';
import { mailRetryMs } from './domain/mail-retry.ts';
import { deleteOldMails, leaseDueMails, recordFailure, recordSent, type LeasedMail } from './queries/mails.ts';

/**
 * The dispatcher sends the platform's e-mail, as it sends webhooks: outbound delivery with leases and retries is
 * its trade, and the SMTP credentials then live in no other process (not in the gateway, which faces the internet).
 *
 * Mails are rows of `mails` (shared/src/mail.ts), written in the transaction of the change that causes them. Every
 * replica, woken by the NOTIFY of that commit and otherwise every POLL_MS, leases due rows, sends them and records
 * each sent, only while its lease holds and only once. A failure is retried with backoff for ever (mail-retry.ts);
 * a 5xx refusal is recorded and not retried. Delivery is at least once: a replica that dies after the SMTP server
 * took a mail and before recording it leaves the mail to be sent again once its lease has run out; the Message-ID
 * is the mail's id, the same each time, so a receiving system can tell the copies apart.
 */
export interface MailSender {
  via: 'smtp' | 'dev_mailbox';
  send(mail: LeasedMail, content: MailContent): Promise<void>;
  close(): void;
}

const POLL_MS = 1_000;
const BATCH = 20;
/** How long each phase of an SMTP conversation (connect, greeting, every answer) may take. */
export const SMTP_TIMEOUT_MS = 10_000;
/** Longer than an SMTP conversation may take (three phases of SMTP_TIMEOUT_MS), plus time to record it. */
const LEASE_MS = 60_000;
/** How long sent (or refused) mails are kept for the operator's questions, then deleted. */
const RETENTION_DAYS = 30;

/** Over SMTP to `url` (smtp:// with STARTTLS when offered, smtps:// for TLS from the start), from `from`. */
export function smtpSender(url: string, from: string, timeoutMs = SMTP_TIMEOUT_MS): MailSender {
  const u = new URL(url);
  const secure = u.protocol === 'smtps:';
  const transport = createTransport({
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'localhost';
  return {
    via: 'smtp',
    async send(mail, content) {
      await transport.sendMail({
        from,
        to: mail.recipient,
        subject: mail.subject,
        text: content.text,
        html: content.html,
        messageId: `<${mail.id}@${domain}>`,
      });
    },
    close: () => transport.close(),
  };
}

/**
 * Outside production without SMTP_URL: the mail stays in Postgres for GET /dev/mailbox on the gateway, and is
 * logged on one line with its links, which in development is the point (the verification link of a sign-up).
 */
export function devMailboxSender(log: Logger): MailSender {
  return {
    via: 'dev_mailbox',
    send(mail, content) {
      log.info('mail put in the development mailbox (GET /dev/mailbox)', {
        mail_id: mail.id,
        kind: mail.kind,
        to: mail.recipient,
        subject: mail.subject,
        links: content.links,
      });
      return Promise.resolve();
    },
    close: () => {},
  };
}

export function startMailer(opts: {
  sql: Sql;
  log: Logger;
  keys: readonly Buffer[];
  sender: MailSender;
  replicaId: string;
}): Worker {
  const { sql, log, sender, replicaId } = opts;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const sendOne = async (mail: LeasedMail) => {
    try {
      if (mail.content === null) throw new Error('the mail has no content');
      await sender.send(mail, openMailContent(opts.keys, { ...mail, content: mail.content }));
    } catch (err) {
      const code = (err as { responseCode?: number }).responseCode;
      const retryMs = mailRetryMs(mail.attempts, code);
      // The SMTP server's answer names the problem; it carries no content of the mail.
      const reason = (err as Error).message;
      await recordFailure(sql, { id: mail.id, replicaId, reason, retryMs });
      if (retryMs === null) log.warn('mail refused for good', { mail_id: mail.id, kind: mail.kind, smtp_code: code });
      else log.warn('mail not sent; retrying', { mail_id: mail.id, attempts: mail.attempts, retry_ms: retryMs, err });
      return;
    }
    if (await recordSent(sql, { id: mail.id, replicaId, via: sender.via }))
      log.info('mail sent', { mail_id: mail.id, kind: mail.kind, via: sender.via });
  };

  const pass = async () => {
    do {
      again = false;
      for (;;) {
        const leased = await leaseDueMails(sql, { replicaId, leaseMs: LEASE_MS, limit: BATCH });
        await Promise.all(leased.map(sendOne));
        if (leased.length < BATCH || stopped) break;
      }
    } while (again && !stopped);
  };
  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err) => log.warn('mail pass failed; the next one retries', { err }))
      .finally(() => {
        running = null;
      });
  };

  const timer = setInterval(wake, POLL_MS);
  timer.unref();
  const listening = sql.listen(MAIL_NOTIFY_CHANNEL, wake).catch((err) => {
    log.warn('mailer could not LISTEN; polling only', { err });
    return null;
  });
  wake();
  const purge = startPeriodicPurge({
    what: 'sent mails',
    log,
    batch: 1000,
    deleteBatch: (limit) => deleteOldMails(sql, RETENTION_DAYS, limit),
  });

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      const l = await listening;
      await l?.unlisten().catch(() => {});
      await running;
      await purge.stop();
      sender.close();
    },
  };
}
