-- The trace that made an offer (the order's placement, through the dispatch job): its accept
-- continues it, so one trace runs from placement through the offer to the assignment.
alter table dispatch_offers add column traceparent text;
