create table placements (
  id               uuid primary key,
  business_id      uuid not null references businesses(id),
  status           text not null check (status in ('pending', 'succeeded', 'failed')),
  idempotency_key  text,
  request_hash     text not null,
  status_code      integer,
  response         jsonb,
  created_at       timestamptz not null default now(),
  completed_at     timestamptz
);
create unique index placements_idempotency on placements (business_id, idempotency_key) where idempotency_key is not null;

create table orders (
  id             text primary key,
  placement_id   uuid not null references placements(id),
  business_id    uuid not null references businesses(id),
  position       integer not null,
  price          bigint not null check (price >= 0),
  currency       char(3) not null,
  pricing_model  text not null,
  option_id      text,
  delivery_mode  text not null,
  distance_km    numeric not null,
  shipment       jsonb not null,
  created_at     timestamptz not null default now(),
  unique (placement_id, position)
);
create index orders_business on orders (business_id, created_at);
