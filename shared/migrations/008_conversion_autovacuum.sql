-- The conversion path's tables grow by a row or more per event, and the outbox and the processed-conversion claims
-- are updated moments after their insert. With the default thresholds (10 % changed for analyze, 20 % for vacuum)
-- a large table goes long without fresh statistics, and prepared statements' generic plans, costed from row counts
-- of long ago, may walk every row of a merchant through a shorter index where the primary key finds one. Analyze
-- after 1 % (at least 1,000 rows) has changed; vacuum the outbox, whose unpublished-rows index the relay reads on
-- every wake-up, after 2 %.
alter table conversion_events set (autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000);
alter table processed_conversions set (autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000);
alter table commissions set (autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000);
alter table outbox set (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_analyze_scale_factor = 0.01,
  autovacuum_analyze_threshold = 1000
);
