-- Webhooks (docs/contracts.md section 7): endpoints, one delivery row per (event, endpoint,
-- redelivery), one attempt row per HTTP attempt, and the outbox's "relayed" mark on events.

create table webhook_endpoints (
  id                         text primary key,
  business_id                uuid not null references businesses(id),
  livemode                   boolean not null,
  url                        text not null,
  -- Null: every event type.
  event_types                text[],
  description                text,
  secret                     text not null,
  -- After a rotation the old secret signs alongside the new one until it expires.
  previous_secret            text,
  previous_secret_expires_at timestamptz,
  status                     text not null default 'enabled' check (status in ('enabled', 'disabled')),
  disabled_reason            text,
  -- Deliveries that ended failed in a row; a success sets it back to 0.
  consecutive_failures       integer not null default 0,
  created_at                 timestamptz not null default now()
);
create index webhook_endpoints_by_business on webhook_endpoints (business_id, livemode, created_at);

-- An event not yet turned into deliveries: the relay's work list.
alter table events add column relayed_at timestamptz;
update events set relayed_at = now();
create index events_unrelayed on events (created_at) where relayed_at is null;

create table webhook_deliveries (
  id              bigint generated always as identity primary key,
  event_id        text not null references events(id),
  endpoint_id     text not null references webhook_endpoints(id) on delete cascade,
  -- 0 for the relay's delivery, 1, 2 … for each redelivery asked for.
  redelivery      integer not null default 0,
  status          text not null default 'pending' check (status in ('pending', 'retrying', 'succeeded', 'failed')),
  attempts        integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  unique (event_id, endpoint_id, redelivery)
);
-- The sweep's work list: deliveries not yet at rest.
create index webhook_deliveries_open on webhook_deliveries (next_attempt_at) where status in ('pending', 'retrying');

create table webhook_attempts (
  id               bigint generated always as identity primary key,
  delivery_id      bigint not null references webhook_deliveries(id) on delete cascade,
  endpoint_id      text not null references webhook_endpoints(id) on delete cascade,
  event_id         text not null,
  event_type       text not null,
  attempt          integer not null,
  status           text not null check (status in ('succeeded', 'retrying', 'failed')),
  response_status  integer,
  duration_ms      integer not null,
  error            text,
  next_attempt_at  timestamptz,
  at               timestamptz not null default now()
);
create index webhook_attempts_by_endpoint on webhook_attempts (endpoint_id, id desc);
