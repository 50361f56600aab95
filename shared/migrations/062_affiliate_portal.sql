-- The affiliate portal's sign-in (docs/PORTAL.md). An affiliate signs in without a password, by a single-use link:
-- mailed to its address (`sign_in`, and `payout_details`, the fresh link a change of payout details asks for), or
-- made by the merchant's system for its own app (`embed`, POST /api/v1/affiliates/{id}/portal_sessions). Only the
-- links' SHA-256 is stored, like every token of the platform.
create table if not exists portal_links (
  token_hash   bytea primary key,
  purpose      text not null check (purpose in ('sign_in', 'embed', 'payout_details')),
  -- Lower case. A sign-in link opens every approved programme of this address; the others, one affiliate only.
  email        text not null,
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  -- Where an embedded session's "back" goes (embed only); checked against the merchant's frame origins when made.
  return_url   text,
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  expires_at   timestamptz not null,
  used_at      timestamptz,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create index if not exists portal_links_expiry on portal_links (expires_at);

-- A portal session: the cookie's SHA-256, the person (address) and the programme shown now. `only_affiliate` is set
-- for a session an embed link opened: the merchant that made it may show its own affiliate, never the same person's
-- other programmes, so such a session has no programme switcher.
create table if not exists portal_sessions (
  token_hash     bytea primary key,
  email          text not null,
  merchant_id    text not null references merchants (id),
  affiliate_id   text not null,
  only_affiliate boolean not null,
  return_url     text,
  -- Until when a fresh payout-details link lets this session change the affiliate's payout details.
  payout_details_until timestamptz,
  created_at     timestamptz not null default date_trunc('milliseconds', now()),
  expires_at     timestamptz not null,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create index if not exists portal_sessions_expiry on portal_sessions (expires_at);
create index if not exists portal_sessions_affiliate on portal_sessions (merchant_id, affiliate_id);

-- Sign-in by address finds the person's affiliates across merchants.
create index if not exists affiliates_email on affiliates (lower(email));
