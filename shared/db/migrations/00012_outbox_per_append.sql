-- One outbox row per append instead of one per event (npm run bench, README "Performance"): a
-- placement's 100 events were 100 heap rows and 100 index entries here, each written to the WAL,
-- then deleted one by one by the relay and vacuumed. A row now names the events of one append
-- (a placement's, or an order change's one) by their business, mode and range of sequence
-- numbers, which an append takes without gaps; a few fixed-size columns, never TOASTed.
alter table event_outbox add column business_id uuid;
alter table event_outbox add column livemode boolean;
alter table event_outbox add column first_sequence bigint;
alter table event_outbox add column last_sequence bigint;
update event_outbox o set business_id = e.business_id, livemode = e.livemode, first_sequence = e.sequence, last_sequence = e.sequence
from events e where e.id = o.event_id;
delete from event_outbox where business_id is null;
alter table event_outbox alter column business_id set not null;
alter table event_outbox alter column livemode set not null;
alter table event_outbox alter column first_sequence set not null;
alter table event_outbox alter column last_sequence set not null;
alter table event_outbox add constraint event_outbox_range check (last_sequence >= first_sequence);
alter table event_outbox drop column event_id;
