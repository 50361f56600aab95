-- webhook_deliveries is a queue: every delivery is inserted, leased and recorded within seconds, three row versions
-- and their index entries each. With the default thresholds (20 % of the table changed) autovacuum visits it rarely
-- once it is large, and in between the claims walk dead index entries and plan with row counts from long ago. Visit
-- it after 2 % (at least 1,000 rows) has changed, analyze after 1 %, and do not throttle its vacuum.
alter table webhook_deliveries set (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_analyze_scale_factor = 0.01,
  autovacuum_analyze_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
alter table webhook_attempts set (
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_analyze_threshold = 1000
);
