-- DESIGN 9: "10 consecutive failed deliveries (over 5 days)" disable an endpoint. The count alone
-- did, so a busy business's endpoint was disabled after a day and a bit of downtime. The span is
-- measured from failing_since: when the endpoint's first attempt without a 2xx since its last
-- success was written (shared/db/webhooks.ts says why the first attempt, not the first delivery
-- to end failed). A success sets it back to null with consecutive_failures.
alter table webhook_endpoints add column failing_since timestamptz;

-- When a streak already under way began is not kept; it is taken to begin now, so no endpoint is
-- disabled by the new rule sooner than 5 days after this runs.
update webhook_endpoints set failing_since = now() where consecutive_failures > 0;

-- During the rollout, a success written by a previous pod resets consecutive_failures but not
-- failing_since; the next success a new pod writes clears it. Until then, if such an endpoint
-- fails again, its span counts from the outage before (from this migration at the earliest), so
-- it may be disabled sooner than 5 days into the new one.
