-- Billing events for the platform operator's endpoint (BILLING_WEBHOOK_URL, docs/BILLING.md): written in the
-- transaction of the billing change they report, sent by the gateway's billing job, at least once (the receiver
-- deduplicates on webhook-id, the event's id), retried with the webhooks' backoff until delivered.
create table if not exists billing_events (
  merchant_id     text not null references merchants (id),
  id              text not null,
  type            text not null,
  data            jsonb not null,
  created_at      timestamptz not null default date_trunc('milliseconds', now()),
  attempts        integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error      text,
  delivered_at    timestamptz,
  primary key (merchant_id, id)
);
create index if not exists billing_events_due on billing_events (next_attempt_at) where delivered_at is null;
