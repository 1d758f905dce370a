-- Each offer names the dispatch round it was made in (DESIGN 14: a decline or an expiry offers the
-- order to the next courier; after DISPATCH_MAX_OFFERS, or with nobody in range, the order waits
-- DISPATCH_RETRY_S and starts again). The round lived only in the dispatcher's job, and the job
-- queued after a decline or an expiry carried none: from the second round on, the next look counted
-- every earlier round's offers as this round's, and the order waited another DISPATCH_RETRY_S after
-- each decline. The row is the truth now: a look with no round of its own goes on with the round of
-- the order's latest offer. Offers made before this name none and count from when the order last
-- became `created`, as before.
alter table dispatch_offers add column round_started_at timestamptz;
