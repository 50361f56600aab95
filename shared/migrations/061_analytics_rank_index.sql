-- Ranking a dimension (GET /api/v1/analytics?group_by=affiliate) sums conversions per affiliate over the range: with
-- many affiliates each with few conversions that is a row per conversion, read from this index alone (an index-only
-- scan, once vacuum has marked the pages visible) rather than from the rollup's wider heap rows. Only the drain
-- writes the table, and it waits for this index while it is built; recording never does.
create index if not exists analytics_conversions_rank on analytics_conversions (merchant_id, bucket)
  include (affiliate_id, conversions, commissions);
