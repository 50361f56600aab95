-- Checks that every commission and affiliate_stats row paid for twice. Each row's (merchant_id, affiliate_id) must
-- name an affiliate of that merchant, and that affiliate's own foreign key holds its merchant: the separate key to
-- merchants checked again, on every insert, what the composite key already guarantees (a KEY SHARE lock on the
-- merchant's row each time: two of the six merchant checks per conversion event in the benchmark before this).
-- affiliate_id is not null in both tables, so the composite key is always checked.
alter table commissions drop constraint commissions_merchant_id_fkey;
alter table affiliate_stats drop constraint affiliate_stats_merchant_id_fkey;

-- (merchant_id, id) duplicated the primary key (id) for lookups that name both, and no foreign key points at it:
-- one index less to maintain for every commission row.
drop index commissions_merchant_id;
