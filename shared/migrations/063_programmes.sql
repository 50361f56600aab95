-- The programme page and applications (docs/PORTAL.md, "Programme page and applications"). A merchant's public
-- programme page, /p/{slug}: written from the dashboard's Settings → Programme, read by the page and by the
-- affiliates service when an application arrives (auto-approve).
create table if not exists programmes (
  merchant_id   text primary key references merchants (id),
  slug          text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
  description   text not null default '' check (length(description) <= 4000),
  -- https (http outside production: the gateway checks that, the table cannot know the environment).
  terms_url     text check (terms_url ~ '^https?://\S+$' and length(terms_url) <= 2048),
  auto_approve  boolean not null default false,
  -- Origins allowed to frame the portal (its frame-ancestors): https://host[:port], at most ten.
  frame_origins text[] not null default '{}' check (cardinality(frame_origins) <= 10),
  created_at    timestamptz not null default date_trunc('milliseconds', now()),
  updated_at    timestamptz not null default date_trunc('milliseconds', now())
);

-- What an applicant told the merchant, one row per affiliate the programme page made.
create table if not exists affiliate_applications (
  merchant_id       text not null,
  affiliate_id      text primary key,
  website           text not null check (length(website) <= 2048),
  promotion         text not null check (length(promotion) <= 2000),
  terms_accepted_at timestamptz not null,
  created_at        timestamptz not null default date_trunc('milliseconds', now()),
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);

-- Affiliates gain the status `rejected`. The wider check is added NOT VALID: a moment's lock and no scan, and every
-- row already passed the narrower one it replaces; new and changed rows are checked from now on.
alter table affiliates drop constraint if exists affiliates_status_check;
alter table affiliates drop constraint if exists affiliates_status;
alter table affiliates add constraint affiliates_status
  check (status in ('pending', 'approved', 'rejected', 'suspended')) not valid;
