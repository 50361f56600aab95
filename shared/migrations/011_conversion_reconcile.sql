-- The commissions service's position in the outbox: `conversion.recorded` rows up to this seq have been checked for
-- a processed_conversions row, so a conversion that JetStream lost after the relay published it (default fsync, a
-- crash) still gets its commissions. Starts at the current end of the outbox: what came before was consumed by then.
create table conversion_reconcile_watermark (
  singleton boolean primary key default true check (singleton),
  seq       bigint not null
);
insert into conversion_reconcile_watermark (seq) select coalesce(max(seq), 0) from outbox;
