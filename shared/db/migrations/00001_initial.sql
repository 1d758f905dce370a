-- Money is integer minor units (kobo) in bigint everywhere.

create table rate_cards (
  id          uuid primary key,
  name        text not null unique,
  currency    char(3) not null,
  created_at  timestamptz not null default now()
);

create table rate_card_versions (
  id            uuid primary key,
  rate_card_id  uuid not null references rate_cards(id),
  version       integer not null check (version > 0),
  created_at    timestamptz not null default now(),
  unique (rate_card_id, version)
);

create table zones (
  version_id  uuid not null references rate_card_versions(id),
  position    integer not null,
  name        text not null,
  -- GeoJSON ring of [lng, lat] pairs, closed.
  polygon     jsonb not null,
  primary key (version_id, position),
  unique (version_id, name)
);

create table options (
  id             text primary key,
  version_id     uuid not null references rate_card_versions(id),
  position       integer not null,
  vehicle_type   text not null check (vehicle_type in ('bike', 'bus_van', 'truck')),
  label          text not null,
  min_weight_kg  numeric,
  max_weight_kg  numeric not null check (max_weight_kg > 0)
);
create index options_version on options (version_id, position);

create table zone_prices (
  option_id  text not null references options(id),
  from_zone  text not null,
  to_zone    text not null,
  price      bigint not null check (price >= 0),
  primary key (option_id, from_zone, to_zone)
);

create table businesses (
  id            uuid primary key,
  name          text not null,
  phone         text not null,
  address       text not null,
  state         text not null,
  latitude      double precision,
  longitude     double precision,
  currency      char(3) not null,
  -- The card this business prices with; its newest version is always the one in force.
  rate_card_id  uuid references rate_cards(id),
  is_demo       boolean not null default false,
  created_at    timestamptz not null default now()
);
create unique index businesses_one_demo on businesses (is_demo) where is_demo;

create table api_keys (
  id              uuid primary key,
  business_id     uuid not null references businesses(id),
  key_hash        text not null unique,
  display_prefix  text not null,
  scopes          text[] not null,
  created_at      timestamptz not null default now(),
  revoked_at      timestamptz
);

create table wallets (
  business_id  uuid primary key references businesses(id),
  balance      bigint not null default 0 check (balance >= 0),
  currency     char(3) not null,
  updated_at   timestamptz not null default now()
);

create table ledger_entries (
  id            bigserial primary key,
  business_id   uuid not null references wallets(business_id),
  kind          text not null check (kind in ('credit', 'debit')),
  amount        bigint not null check (amount > 0),
  reference     text,
  placement_id  uuid,
  created_at    timestamptz not null default now()
);
-- A repeated credit reference credits once; one debit per placement.
create unique index ledger_credit_reference on ledger_entries (business_id, reference) where kind = 'credit' and reference is not null;
create unique index ledger_debit_placement on ledger_entries (placement_id) where kind = 'debit';

create table platform_rates (
  id           boolean primary key default true check (id),
  base_fare    bigint not null check (base_fare >= 0),
  per_km       bigint not null check (per_km >= 0),
  per_kg       bigint not null check (per_kg >= 0),
  min_fare     bigint not null check (min_fare >= 0),
  road_factor  numeric not null check (road_factor >= 1),
  updated_at   timestamptz not null default now()
);

create table geocode_cache (
  query       text primary key,
  latitude    double precision not null,
  longitude   double precision not null,
  created_at  timestamptz not null default now()
);
