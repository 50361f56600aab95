-- Tax forms, payout details and single-use onboarding links. Secrets (TINs, payout details) live only in
-- vault_secrets, encrypted with AES-256-GCM under ENCRYPTION_KEY; key_id names the key each row is encrypted under,
-- so that rows under an earlier key (ENCRYPTION_KEYS_PREVIOUS) are found and decrypted after a rotation.

create table vault_secrets (
  id           text primary key,                     -- vlt_…
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  kind         text not null check (kind in ('tin', 'foreign_tin', 'payout_details')),
  key_id       text not null,
  ciphertext   text not null,                         -- crypto.ts encryptSecret: v1:iv:tag:ciphertext
  masked       jsonb not null,                        -- what may be shown: last four characters, the method
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create index vault_secrets_affiliate on vault_secrets (merchant_id, affiliate_id, created_at desc);
create index vault_secrets_key on vault_secrets (key_id);

create table tax_forms (
  id            text primary key,                     -- txf_…
  merchant_id   text not null references merchants (id),
  affiliate_id  text not null,
  form_type     text not null check (form_type in ('W-9', 'W-8BEN', 'W-8BEN-E')),
  -- The form's fields but the TIN (legal name, classification, address, countries, signature): never a secret.
  details       jsonb not null,
  tin_vault_id  text references vault_secrets (id),
  signed_on     date not null,
  submitted_at  timestamptz not null default date_trunc('milliseconds', now()),
  expires_at    timestamptz,                          -- W-8 forms: end of the third calendar year after signing
  superseded_at timestamptz,                          -- set when a later form of the affiliate arrives
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create index tax_forms_affiliate on tax_forms (merchant_id, affiliate_id, submitted_at desc, id desc);
-- At most one form in force per affiliate, whatever is submitted concurrently.
create unique index tax_forms_current on tax_forms (merchant_id, affiliate_id) where superseded_at is null;

create table onboarding_links (
  token_hash   bytea primary key,                     -- sha-256 of the URL's token; the token itself is never stored
  merchant_id  text not null references merchants (id),
  affiliate_id text not null,
  created_at   timestamptz not null default date_trunc('milliseconds', now()),
  expires_at   timestamptz not null,
  used_at      timestamptz,
  foreign key (merchant_id, affiliate_id) references affiliates (merchant_id, id)
);
create index onboarding_links_affiliate on onboarding_links (merchant_id, affiliate_id, created_at desc);
