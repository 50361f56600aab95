-- Referral clicks carry what a merchant reads them back by (GET /api/v1/clicks) and groups them by
-- (GET /api/v1/analytics): the referring site's host, the visitor's country and the class of device. Never the IP
-- or the whole user agent, which stay where they were (hashed, and for fraud checks only).
-- New columns without a default are a catalogue change only, on every partition: nothing is rewritten. The device
-- class is checked by the code that writes it (services/events), not by a check constraint that would scan years
-- of partitions under an exclusive lock. Rows recorded before this migration have none of the three.
alter table visits add column if not exists referrer_host text;
-- ISO 3166-1 alpha-2, upper case.
alter table visits add column if not exists country text;
-- 'desktop', 'mobile', 'tablet', 'bot' or 'other'.
alter table visits add column if not exists device text;
