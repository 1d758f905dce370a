-- GET /v2/business/events?type=… found its events by walking the business's events in sequence
-- order and dropping the other types, so a type that is rare or absent (order.returned,
-- order.failed) read every event after `after=`: 2 million events of one business took 0.2–0.25 s
-- and two cores here, growing with the retention window. Every order has its created, assigned,
-- picked_up and delivered events, so a page of those is found within a few rows; the other types
-- are indexed here by type, and only they, so the placements and moves that write the common
-- events write nothing more (an index of every event cost the place-100 case about a sixth of
-- its orders a second). listEvents (shared/db/events.ts) repeats this predicate word for word
-- when every type asked for is one of these, so the planner can prove the index covers them.
create index events_uncommon_types on events (business_id, livemode, type, sequence)
  where type not in ('order.created', 'order.assigned', 'order.picked_up', 'order.delivered');
