-- Visits are deleted once older than VISIT_RETENTION_DAYS (events service, hourly): the purge finds them by age.
create index visits_created_at on visits (created_at);
