-- The audit log of a merchant's team and settings (Settings → Audit log): who did what, when, from where. Written in
-- the transaction of the change it records. The actor is kept by id and e-mail with no foreign key: a removed
-- member's entries stay. Keyed with merchant_id first, as a table distributed by merchant would be (docs/SCALING.md).
create table if not exists dashboard_audit (
  merchant_id text not null references merchants (id),
  id          text not null,
  actor_id    text not null,
  actor_email text not null,
  action      text not null,
  target      text,
  detail      jsonb not null default '{}',
  ip          text not null,
  created_at  timestamptz not null default date_trunc('milliseconds', now()),
  primary key (merchant_id, id)
);
create index if not exists dashboard_audit_newest on dashboard_audit (merchant_id, created_at desc, id desc);
