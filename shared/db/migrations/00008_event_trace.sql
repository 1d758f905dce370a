-- The W3C traceparent of the transaction that wrote an event: the webhook sender continues that
-- trace, so one trace runs from the order change to each HTTP delivery. Null when not traced.
alter table events add column traceparent text;
