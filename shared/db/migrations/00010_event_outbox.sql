-- The relay's work list moves off the events rows into a table of its own (npm run bench, README
-- "Performance"). Marking an event relayed rewrote its whole row (about 1.5 KB: the order as
-- shown) and re-inserted it into every index of events, once per event: a fifth of Postgres's
-- time under a 100-shipment placement load. A row here is a few bytes, written with its event
-- in the same statement and deleted by the relay when it writes the event's deliveries.
create table event_outbox (
  id        bigint generated always as identity primary key,
  event_id  text not null
);
insert into event_outbox (event_id) select id from events where relayed_at is null order by created_at;
drop index events_unrelayed;
alter table events drop column relayed_at;

-- One foreign-key check per row instead of two on the rows a placement writes most of. An
-- order's placement and business are checked together, which also holds the order to its
-- placement's business; an event's business is its order's (events.order_id still references
-- orders), so its own check against businesses repeated work on every row.
alter table placements add constraint placements_id_business_id_key unique (id, business_id);
alter table orders drop constraint orders_placement_id_fkey;
alter table orders drop constraint orders_business_id_fkey;
alter table orders add constraint orders_placement_business_fkey foreign key (placement_id, business_id) references placements (id, business_id);
alter table events drop constraint events_business_id_fkey;
