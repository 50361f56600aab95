import express, { type Request, type Response } from 'express';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { openMailContent } from '@platform/shared/mail';
import { sendError } from '../../http/http-errors.ts';
import { mailboxMails } from './queries/mails.ts';

/** How many mails the mailbox shows, newest first. */
const MAILBOX_SIZE = 50;

/**
 * GET /dev/mailbox: the mails the dispatcher put in the development mailbox (it does when SMTP_URL is unset outside
 * production), newest first, as JSON: `to`, `subject`, `text` and `links` (a sign-up's verification link). It lets a
 * newcomer on `npm start` verify an address with no mail server. Mounted only when APP_ENV is not production (app.ts):
 * there it does not exist, and a production dispatcher never writes to the mailbox anyway (SMTP_URL is required).
 */
export function createDevMailbox(sql: Sql, keys: readonly Buffer[], log: Logger): express.Router {
  const router = express.Router();
  router.get('/dev/mailbox', async (_req: Request, res: Response) => {
    res.locals['route'] = 'dev.mailbox';
    res.setHeader('Cache-Control', 'no-store');
    try {
      const rows = await mailboxMails(sql, MAILBOX_SIZE);
      const mails = rows.map((r) => {
        const content = openMailContent(keys, r);
        return {
          id: r.id,
          to: r.recipient,
          subject: r.subject,
          text: content.text,
          links: content.links,
          created_at: r.created_at.toISOString(),
        };
      });
      res.json({ mails });
    } catch (err) {
      log.error('development mailbox failed', { err: err as Error });
      sendError(res, 'INTERNAL', 'Something went wrong on our side');
    }
  });
  return router;
}
