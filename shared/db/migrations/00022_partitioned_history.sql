-- Tables that grow forever stop doing so (DESIGN 16): events, webhook delivery attempts and
-- order trails become range-partitioned by month on their time column, so retention drops whole
-- months (docs/scaling.md "Partitioned history and retention") instead of deleting row by row.
-- Each table is rebuilt: the partitioned table is made beside it, every row moved into its
-- month, the old one dropped and the indexes rebuilt under their old names. One transaction, so
-- a big table holds its lock for the copy: on a large production database plan a quiet window.
--
-- A key of a partitioned table must contain the partition key:
-- - events: primary key (id, created_at); the per-business numbering keeps its unique index as
--   (business_id, livemode, sequence, created_at). Sequence numbers are still unique: the
--   counter row hands each number out once (shared/db/events.ts), the index served the listing.
--   Events are looked up by id alone through each month's primary-key index.
-- - webhook_attempts: primary key (id, at); ids still come from one identity sequence.
-- - order_trail_points: its key (order_id, at) already holds its time column.
-- webhook_deliveries.event_id can no longer reference events(id) (not unique on its own), and a
-- foreign key would forbid dropping a month of events; like events.order_id (migration 00011) it
-- is written only from an event just read, so the check never failed. Deliveries stay one table
-- (the relay's `on conflict` needs their unique key); retention deletes those at rest.

alter table webhook_deliveries drop constraint webhook_deliveries_event_id_fkey;
create index webhook_deliveries_by_created on webhook_deliveries (created_at);

-- Creates `parent`'s month partitions (`parent_YYYY_MM`, UTC months) from the month of
-- `first_at` through two months after now, and its default partition (`parent_default`), the
-- safety net for a row outside every month. keepPartitions makes later months ahead
-- (shared/orders/history.ts) with the same names. Dropped at the end: the schema keeps no function
-- (and not a temporary one: the owner role of deploy/postgres/roles.sql may not make those).
create function courier_month_partitions(parent text, first_at timestamptz) returns void language plpgsql as $$
declare
  -- UTC wall time, so a month is a UTC month whatever the session's time zone.
  month timestamp := date_trunc('month', coalesce(first_at, now()) at time zone 'UTC');
  last_month timestamp := date_trunc('month', now() at time zone 'UTC') + interval '2 months';
begin
  while month <= last_month loop
    execute format('create table %I partition of %I for values from (%L) to (%L)',
      parent || '_' || to_char(month, 'YYYY_MM'), parent, month at time zone 'UTC', (month + interval '1 month') at time zone 'UTC');
    month := month + interval '1 month';
  end loop;
  execute format('create table %I partition of %I default', parent || '_default', parent);
end $$;

-- events
alter table events rename to events_unpartitioned;
create table events (
  id             text not null,
  business_id    uuid not null,
  livemode       boolean not null,
  sequence       bigint not null constraint events_sequence_check check (sequence > 0),
  type           text not null,
  order_id       text not null,
  order_version  integer not null,
  -- {"order": <the order resource after the change>}, as written (migration 00013)
  data           json not null,
  created_at     timestamptz not null,
  traceparent    text
) partition by range (created_at);
select courier_month_partitions('events', (select min(created_at) from events_unpartitioned));
insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at, traceparent)
select id, business_id, livemode, sequence, type, order_id, order_version, data, created_at, traceparent from events_unpartitioned;
drop table events_unpartitioned;
alter table events add constraint events_pkey primary key (id, created_at);
alter table events add constraint events_business_id_livemode_sequence_key unique (business_id, livemode, sequence, created_at);
create index events_by_order on events (order_id);

-- webhook_attempts
alter table webhook_attempts rename to webhook_attempts_unpartitioned;
alter table webhook_attempts_unpartitioned alter column id drop identity;
create table webhook_attempts (
  id               bigint generated always as identity,
  delivery_id      bigint not null constraint webhook_attempts_delivery_id_fkey references webhook_deliveries(id) on delete cascade,
  endpoint_id      text not null constraint webhook_attempts_endpoint_id_fkey references webhook_endpoints(id) on delete cascade,
  event_id         text not null,
  event_type       text not null,
  attempt          integer not null,
  status           text not null constraint webhook_attempts_status_check check (status in ('succeeded', 'retrying', 'failed')),
  response_status  integer,
  duration_ms      integer not null,
  error            text,
  next_attempt_at  timestamptz,
  at               timestamptz not null default now()
) partition by range (at);
select courier_month_partitions('webhook_attempts', (select min(at) from webhook_attempts_unpartitioned));
insert into webhook_attempts (id, delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at, at)
overriding system value
select id, delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at, at from webhook_attempts_unpartitioned;
select setval(pg_get_serial_sequence('webhook_attempts', 'id'), coalesce((select max(id) from webhook_attempts_unpartitioned), 0) + 1, false);
drop table webhook_attempts_unpartitioned;
alter table webhook_attempts add constraint webhook_attempts_pkey primary key (id, at);
create index webhook_attempts_by_endpoint on webhook_attempts (endpoint_id, id desc);

-- order_trail_points
alter table order_trail_points rename to order_trail_points_unpartitioned;
alter table order_trail_points_unpartitioned rename constraint order_trail_points_pkey to order_trail_points_unpartitioned_pkey;
create table order_trail_points (
  order_id   text not null constraint order_trail_points_order_id_fkey references orders(id),
  at         timestamptz not null,
  latitude   float8 not null,
  longitude  float8 not null,
  primary key (order_id, at)
) partition by range (at);
select courier_month_partitions('order_trail_points', (select min(at) from order_trail_points_unpartitioned));
insert into order_trail_points (order_id, at, latitude, longitude)
select order_id, at, latitude, longitude from order_trail_points_unpartitioned;
drop table order_trail_points_unpartitioned;

drop function courier_month_partitions(text, timestamptz);
