-- Money integrity in the payment API (issue 31): processor calls outside any row lock, recoverable after a crash, and
-- a ledger that is history only.

-- A processor call in flight: the intent is committed as `processing` with what is being asked (operation, request,
-- attempt) before the processor is called, so that a crash between the call and the write of its outcome leaves a row
-- the reconciler finishes by asking the processor again with the same idempotency key (intent, operation, attempt).
alter table payment_intents
  add column processor_attempts  integer not null default 0,
  add column processing_operation text check (processing_operation in ('confirm', 'capture')),
  add column processing_request   jsonb,
  add column processing_since     timestamptz;
create index payment_intents_processing on payment_intents (processing_since) where status = 'processing';

-- What the sandbox processor has answered, by idempotency key: the processor's own memory (a real processor keeps it
-- on its side), so that a call repeated with the same key answers the first outcome and never moves money twice.
create table sandbox_processor_calls (
  idempotency_key text primary key,
  livemode        boolean not null,
  operation       text not null check (operation in ('authorize', 'capture')),
  request         jsonb not null,
  outcome         jsonb not null,
  created_at      timestamptz not null default now()
);

-- At most one charge per payment intent reaches the ledger, whichever of the request and the reconciler writes it.
create unique index ledger_movements_one_charge on ledger_movements (source) where kind = 'charge';

-- Ledger rows are never changed or removed: a correction is a new movement. With updates refused, the zero-sum check
-- on insert (ledger_entries_balanced) holds for the ledger's whole life.
create function ledger_rows_immutable() returns trigger language plpgsql as $$
begin
  raise exception '% rows cannot be changed or removed (%): post a correcting movement instead', tg_table_name, tg_op
    using errcode = '42501';
end $$;
create trigger ledger_entries_immutable before update or delete on ledger_entries
  for each row execute function ledger_rows_immutable();
create trigger ledger_movements_immutable before update or delete on ledger_movements
  for each row execute function ledger_rows_immutable();
create trigger ledger_entries_no_truncate before truncate on ledger_entries
  for each statement execute function ledger_rows_immutable();
create trigger ledger_movements_no_truncate before truncate on ledger_movements
  for each statement execute function ledger_rows_immutable();
