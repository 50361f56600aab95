import type { Sql } from '@platform/shared/db';

/** A mail leased for sending: who to, what, and its content as stored (encrypted). */
export interface LeasedMail {
  id: string;
  merchant_id: string;
  kind: string;
  recipient: string;
  subject: string;
  content: string | null;
  attempts: number;
}

/**
 * Leases up to `limit` due mails to this replica (unsent, not refused for good, due, and not leased by a live
 * replica), counting the attempt. Rows another replica is leasing are skipped, so no mail is sent by two replicas at
 * the same time; a lease that runs out (its replica died mid-send) makes the mail due again.
 */
export async function leaseDueMails(
  sql: Sql,
  lease: { replicaId: string; leaseMs: number; limit: number },
): Promise<LeasedMail[]> {
  return sql<LeasedMail[]>`
    update mails m set
      leased_until = now() + make_interval(secs => ${lease.leaseMs / 1000}),
      leased_by = ${lease.replicaId},
      attempts = m.attempts + 1
    where m.id in (
      select id from mails
      where sent_at is null and failed_at is null and next_attempt_at <= now()
        and (leased_until is null or leased_until < now())
      order by next_attempt_at
      limit ${lease.limit}
      for update skip locked)
    returning m.id, m.merchant_id, m.kind, m.recipient, m.subject, m.content_encrypted as content, m.attempts`;
}

/**
 * Records a mail sent, once: only while this replica's lease holds it and it is not already recorded. A mail sent
 * over SMTP loses its content (it has left; the link in it should not stay readable here); one put in the
 * development mailbox keeps it, since that is what the mailbox shows.
 */
export async function recordSent(
  sql: Sql,
  mail: { id: string; replicaId: string; via: 'smtp' | 'dev_mailbox' },
): Promise<boolean> {
  const updated = await sql`
    update mails set sent_at = now(), sent_via = ${mail.via}, leased_until = null, last_error = null,
      content_encrypted = case when ${mail.via} = 'smtp' then null else content_encrypted end
    where id = ${mail.id} and leased_by = ${mail.replicaId} and sent_at is null`;
  return updated.count === 1;
}

/** Records a failed attempt: retried after `retryMs`, or, refused for good, never again. */
export async function recordFailure(
  sql: Sql,
  mail: { id: string; replicaId: string; reason: string; retryMs: number | null },
): Promise<void> {
  await sql`
    update mails set leased_until = null, last_error = ${mail.reason.slice(0, 500)},
      next_attempt_at = now() + make_interval(secs => ${(mail.retryMs ?? 0) / 1000}),
      failed_at = case when ${mail.retryMs === null} then now() else null end
    where id = ${mail.id} and leased_by = ${mail.replicaId} and sent_at is null`;
}

/** Deletes up to `limit` mails sent or refused more than `retentionDays` ago. */
export async function deleteOldMails(sql: Sql, retentionDays: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from mails where id in (
      select id from mails
      where (sent_at is not null or failed_at is not null)
        and coalesce(sent_at, failed_at) < now() - make_interval(days => ${retentionDays})
      limit ${limit}
      for update skip locked)`;
  return deleted.count;
}
