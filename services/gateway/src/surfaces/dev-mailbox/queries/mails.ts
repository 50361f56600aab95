import type { Sql } from '@platform/shared/db';

/** A mail of the development mailbox, its content still sealed. */
export interface MailboxRow {
  id: string;
  merchant_id: string;
  recipient: string;
  subject: string;
  content: string;
  created_at: Date;
}

/** The latest `limit` mails the dispatcher put in the development mailbox, newest first. */
export const mailboxMails = (sql: Sql, limit: number) => sql<MailboxRow[]>`
  select id, merchant_id, recipient, subject, content_encrypted as content, created_at from mails
  where sent_via = 'dev_mailbox' and content_encrypted is not null
  order by created_at desc, id desc limit ${limit}`;
