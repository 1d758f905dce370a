-- An event's order is no longer checked by a foreign key (npm run bench, README "Performance").
-- Events are appended only in the transaction that inserts or changes their order, with the
-- order's own id, so the check could never fail; but it ran once per event and took a KEY SHARE
-- lock on the order row, which is written to the WAL: about a sixth of Postgres's time in the
-- append of a 100-shipment placement. Orders keep their key to their placement and business.
alter table events drop constraint events_order_id_fkey;
