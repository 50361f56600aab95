-- Onboarding links that revoke one another, an audit of payout-detail changes, and superseded vault rows that the
-- affiliates service purges after a retention (docs/PAYOUTS.md, "Onboarding links" and "Payout details history").

-- A link has an id (obl_…) that the audit names; links made before have none. revoked_at: a newer link was made, or
-- another link of the affiliate was used; a revoked link is refused like a used one.
alter table onboarding_links add column id text unique, add column revoked_at timestamptz;

-- The links still open are judged as if the rule had always held: one is revoked when a newer link of the affiliate
-- was made, or another was used after it was made (else it could overwrite what that link stored).
update onboarding_links l set revoked_at = date_trunc('milliseconds', now())
where l.used_at is null and l.revoked_at is null and l.expires_at > now()
  and exists (
    select 1 from onboarding_links n
    where n.merchant_id = l.merchant_id and n.affiliate_id = l.affiliate_id and n.token_hash <> l.token_hash
      and ((n.created_at, n.token_hash) > (l.created_at, l.token_hash) or n.used_at > l.created_at));

-- When a newer secret replaced this one (the affiliate's payout details or TIN changed); null while it is in use.
alter table vault_secrets add column superseded_at timestamptz;
update vault_secrets v set superseded_at = date_trunc('milliseconds', now())
where not exists (
    select 1 from affiliates a
    where a.merchant_id = v.merchant_id and (a.payout_details_vault_id = v.id or a.tin_vault_id = v.id));
create index vault_secrets_superseded on vault_secrets (superseded_at) where superseded_at is not null;

-- Every change of an affiliate's payout details: when, through what (and who, when known), and the details before
-- and after as the vault keeps them masked, never in clear. Kept as long as the affiliate.
create table payout_details_changes (
  id            text primary key,                    -- pdc_…
  merchant_id   text not null references merchants (id),
  affiliate_id  text not null,
  changed_at    timestamptz not null default date_trunc('milliseconds', now()),
  source        text not null check (source in ('api', 'dashboard', 'onboarding_link')),
  actor_id      text,                                -- key_… (api), usr_… (dashboard), obl_… (onboarding link)
  masked_before jsonb,                               -- null when none were set
  masked_after  jsonb not null,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create index payout_details_changes_affiliate
  on payout_details_changes (merchant_id, affiliate_id, changed_at desc, id desc);
