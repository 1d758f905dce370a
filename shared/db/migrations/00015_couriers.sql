-- Couriers and dispatch (DESIGN 14): the riders, their Bearer tokens (hashed like API keys), the
-- offers that hand them orders, and where each order's ends are on the map.
create table couriers (
  id             uuid primary key,
  name           text not null,
  phone          text not null,
  vehicle_type   text not null check (vehicle_type in ('bike', 'car', 'bus_van', 'truck')),
  vehicle_plate  text,
  max_weight_kg  numeric not null check (max_weight_kg > 0),
  disabled_at    timestamptz,
  created_at     timestamptz not null default now()
);

create table courier_tokens (
  id              uuid primary key,
  courier_id      uuid not null references couriers(id),
  token_hash      text not null unique,
  display_prefix  text not null,
  created_at      timestamptz not null default now(),
  revoked_at      timestamptz
);
create index courier_tokens_courier on courier_tokens (courier_id);

-- The pickup and dropoff as placement located them: dispatch searches around the pickup and the
-- ETA runs to either end. Personal data: erased with the shipment's other fields.
alter table orders
  add column courier_id   uuid references couriers(id),
  add column pickup_lat   float8,
  add column pickup_lng   float8,
  add column dropoff_lat  float8,
  add column dropoff_lng  float8;
create index orders_courier_active on orders (courier_id) where status in ('assigned', 'picked_up', 'failed');
create index orders_waiting_for_courier on orders (created_at) where status = 'created' and livemode;

-- One row per offer of an order to a courier. The two partial unique indexes are the guarantee:
-- at most one pending offer per order and per courier, whatever runs at once.
create table dispatch_offers (
  id           text primary key,
  order_id     text not null references orders(id),
  courier_id   uuid not null references couriers(id),
  status       text not null default 'pending' check (status in ('pending', 'accepted', 'declined', 'expired', 'withdrawn')),
  created_at   timestamptz not null default now(),
  expires_at   timestamptz not null,
  decided_at   timestamptz,
  reason       text
);
create unique index dispatch_offers_pending_order on dispatch_offers (order_id) where status = 'pending';
create unique index dispatch_offers_pending_courier on dispatch_offers (courier_id) where status = 'pending';
create index dispatch_offers_order on dispatch_offers (order_id, created_at);
