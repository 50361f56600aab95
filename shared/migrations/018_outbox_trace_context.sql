-- Tracing (OpenTelemetry): the W3C trace context ({"traceparent", "tracestate"?}) of the work that wrote a row, when
-- tracing was on, so that the asynchronous chain stays one trace. Null when tracing was off.
-- outbox: the transaction that wrote the event; the relay publishes the row with it.
-- webhook_messages: the dispatcher's handling of the event; every attempt of every delivery of it, retries
-- included, is traced as part of it.
-- Nullable columns without a default rewrite nothing: safe while other replicas run.
alter table outbox add column if not exists trace_context jsonb;
alter table webhook_messages add column if not exists trace_context jsonb;
