-- Deleting a webhook endpoint, and pruning deliveries, without scanning the delivery log per row.
--
-- Both foreign keys into the delivery log had no index on their own column, so every delivery
-- deleted (the retention prune's batches, an endpoint's cascade) made Postgres scan every
-- partition of webhook_attempts for its attempts: measured here with 40 000 attempts, a batch of
-- 1000 deliveries took 2 s and an endpoint of 20 000 deliveries 24 s (past the 5 s statement
-- timeout, so the DELETE answered 503); with these indexes, 11 ms and 0.16 s.
create index webhook_attempts_by_delivery on webhook_attempts (delivery_id);
create index webhook_deliveries_by_endpoint on webhook_deliveries (endpoint_id);
-- The one other cascading key without one (test/shared/db/webhooks.test.ts checks them all): a
-- console user's password tokens, scanned whenever a user is deleted.
create index console_password_tokens_by_user on console_password_tokens (user_id);

-- DELETE marks the endpoint; from then on nothing reads, counts or delivers to it, and the webhook
-- sender's sweep removes its deliveries and their log in batches, then the row
-- (shared/db/webhooks.ts). A business's endpoint can have millions of deliveries in the retention
-- window, more than one statement should delete while the caller waits.
alter table webhook_endpoints add column deleted_at timestamptz;
create index webhook_endpoints_deleted on webhook_endpoints (deleted_at) where deleted_at is not null;
