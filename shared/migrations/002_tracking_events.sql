-- Referral tracking and conversion events (events service): visits, coupons, conversion events.

-- One row per recorded referral visit (a click on /r/… or a landing seen by the tracking script).
-- The visit id is the value of the _svc_sess cookie that the merchant's backend sends back as cookie_id.
create table visits (
  id           text primary key,                    -- vis_…
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  ip_hash      text,                                 -- HMAC-SHA256 of the client IP (key from ENCRYPTION_KEY); never the IP
  user_agent   text,
  fingerprint  text,                                 -- optional visitor fingerprint supplied by the merchant's page
  landing_url  text,
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  -- Cookie expiry at the time of the visit; attribution itself uses the merchant's current window on created_at.
  expires_at   timestamptz not null,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
-- Attribution looks a visit up by (merchant, id); the primary key alone would not carry the tenant.
create unique index visits_merchant_id on visits (merchant_id, id);

-- Coupon codes per affiliate; a code is unique per merchant, compared case-insensitively. Deleting is a hard
-- delete: events keep the code they carried as text, and the code becomes free for reuse.
create table coupons (
  id           text primary key,                    -- cpn_…
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  code         text not null check (code ~ '^[A-Za-z0-9_-]{2,64}$'),
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create unique index coupons_merchant_code on coupons (merchant_id, lower(code));
create index coupons_list on coupons (merchant_id, created_at desc, id desc);
create index coupons_list_affiliate on coupons (merchant_id, affiliate_id, created_at desc, id desc);

-- Conversion events sent by merchants (POST /api/v1/events). Idempotent on (merchant, event_type, external_id):
-- a repeat is compared with the stored body_hash (same body: the stored event; different body: CONFLICT).
create table conversion_events (
  id            text primary key,                   -- evt_…
  merchant_id   text not null references merchants (id),
  event_type    text not null check (event_type ~ '^[a-z][a-z0-9_.]{0,63}$'),
  external_id   text not null check (char_length(external_id) between 1 and 255),
  cookie_id     text,
  coupon        text,
  -- Exactly the decimal the merchant sent (scale already checked against the currency's minor unit).
  amount        numeric not null check (amount >= 0 and amount < 1000000000000),
  currency      text not null check (currency ~ '^[A-Z]{3}$'),
  payload       jsonb not null default '{}'::jsonb,
  affiliate_id  text,
  attributed_by text check (attributed_by in ('cookie', 'coupon')),
  -- The visit named by cookie_id when it is one of this merchant's, whether or not it won the attribution.
  visit_id      text,
  body_hash     bytea not null,                     -- sha-256 of the canonical request body
  created_at    timestamptz not null default date_trunc('milliseconds', now()),
  check ((affiliate_id is null) = (attributed_by is null)),
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create unique index conversion_events_idempotency on conversion_events (merchant_id, event_type, external_id);

-- Referral links on a merchant's own host (/r/{slug}) resolve the merchant by settings.tracking_host.
create index merchants_tracking_host on merchants (lower(settings ->> 'tracking_host'));
