-- GET /v2/business/orders?status=cancelled (or returned) walked every order of the business,
-- newest first, and dropped the others until a page was full: with 1 million orders of one
-- business that found none, 0.17–0.19 s and two cores here, and orders are kept for good. Orders
-- that end cancelled or returned are indexed apart, and only they, so a placement and the common
-- moves write nothing more (an index of every order cost the insert of 100 000 orders a fifth
-- more here). Open statuses already have orders_open (migration 00005); delivered, the common end,
-- is a few rows away on orders_by_business. listOrders (shared/db/orders.ts) names the set asked
-- for in the statement's text, so a prepared statement's generic plan can use these indexes too.
create index orders_ended_early on orders (business_id, livemode, status, created_at desc, id desc)
  where status in ('cancelled', 'returned');
