-- Outgoing e-mail, as its own outbox: a mail is a row written in the same transaction as the change that causes it
-- (a sign-up, say), so that a change that commits always has its mail and one rolled back never sends one. The
-- dispatcher sends due rows (services/dispatcher/src/mailer.ts): it leases a row, sends it, and records it sent;
-- the lease keeps two replicas from sending one mail at the same time, and a failure is retried with backoff.
--
-- content_encrypted holds the body (plain text, HTML and the links in it, as JSON) encrypted at rest under the
-- `mail` purpose, bound to the row's id and merchant: a verification link in it is a credential until used. A mail
-- sent over SMTP has it cleared; one delivered to the development mailbox keeps it, which is what the mailbox shows.
create table if not exists mails (
  id text primary key,
  merchant_id text not null references merchants (id) on delete cascade,
  -- What the mail is (verify_email, already_registered): for the logs and the operator, never its content.
  kind text not null,
  recipient text not null,
  subject text not null,
  content_encrypted text,
  created_at timestamptz not null default now(),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  leased_until timestamptz,
  leased_by text,
  last_error text,
  sent_at timestamptz,
  sent_via text check (sent_via in ('smtp', 'dev_mailbox')),
  -- Refused for good by the SMTP server (a 5xx answer): not retried.
  failed_at timestamptz
);

-- The sender's scan: unsent, unfailed rows by due time.
create index if not exists mails_due on mails (next_attempt_at) where sent_at is null and failed_at is null;
-- The development mailbox, newest first.
create index if not exists mails_dev_mailbox on mails (created_at desc) where sent_via = 'dev_mailbox';
-- The retention purge, by the time a mail was sent or refused.
create index if not exists mails_done on mails (coalesce(sent_at, failed_at)) where sent_at is not null or failed_at is not null;
