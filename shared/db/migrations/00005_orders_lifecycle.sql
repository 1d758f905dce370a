-- Orders after placement (docs/contracts.md section 6): a status moved only by the state machine,
-- a version per change, the courier, the history, and what a read shows without re-pricing.
alter table orders add column livemode boolean not null default true;
alter table orders add column status text not null default 'created'
  check (status in ('created', 'assigned', 'picked_up', 'delivered', 'failed', 'returned', 'cancelled'));
alter table orders add column version integer not null default 1 check (version > 0);
alter table orders add column vehicle_type text check (vehicle_type in ('bike', 'bus_van', 'truck'));
alter table orders add column option_label text;
alter table orders add column from_zone_name text;
alter table orders add column to_zone_name text;
alter table orders add column courier jsonb;
alter table orders add column history jsonb;
-- The latest assignment: the business's free cancellation window runs from it.
alter table orders add column assigned_at timestamptz;
alter table orders add column refunded_amount bigint not null default 0 check (refunded_amount >= 0);
alter table orders add column updated_at timestamptz;

-- Order times are kept to the millisecond, as JSON shows them, so a list cursor is exact.
update orders set created_at = date_trunc('milliseconds', created_at);
update orders set vehicle_type = case delivery_mode when 'MOTORBIKE' then 'bike' when 'BUS_VAN' then 'bus_van' else 'truck' end,
  history = jsonb_build_array(jsonb_build_object('status', 'created', 'at', to_json(created_at))),
  updated_at = created_at;
-- A read shows the shipment with its defaults resolved: orders placed before kept only what was sent.
update orders o set shipment = jsonb_build_object('pickup_address', b.address, 'pickup_state', b.state) || o.shipment
from businesses b where b.id = o.business_id and not (o.shipment ? 'pickup_address');
alter table orders alter column vehicle_type set not null;
alter table orders alter column history set not null;
alter table orders alter column updated_at set not null;

-- Newest first, keyset on (created_at, id) per business and mode.
drop index orders_business;
create index orders_by_business on orders (business_id, livemode, created_at desc, id desc);
-- Orders not yet at rest, for the open-orders gauge; terminal orders never enter it.
create index orders_open on orders (status) where status in ('created', 'assigned', 'picked_up', 'failed');

-- Refunds, and a balance after every entry: entries are numbered under the wallet's row lock,
-- so replaying them in id order gives each balance_after.
alter table ledger_entries drop constraint ledger_entries_kind_check;
alter table ledger_entries add constraint ledger_entries_kind_check check (kind in ('credit', 'debit', 'refund'));
alter table ledger_entries add column order_id text references orders(id);
alter table ledger_entries add column balance_after bigint;
update ledger_entries l set balance_after = r.after
from (select id, sum(case when kind = 'debit' then -amount else amount end) over (partition by business_id order by id) as after from ledger_entries) r
where r.id = l.id;
alter table ledger_entries alter column balance_after set not null;
alter table ledger_entries add constraint ledger_balance_after_nonnegative check (balance_after >= 0);
create unique index ledger_refund_order on ledger_entries (order_id) where kind = 'refund';
create index ledger_by_business on ledger_entries (business_id, id desc);

-- The transactional outbox: one row per order change, written in the change's transaction.
-- sequence is per business and mode, gapless: taken from the counter row, locked until commit.
-- Orders placed before this migration have no order.created event.
create table event_sequences (
  business_id    uuid not null references businesses(id),
  livemode       boolean not null,
  last_sequence  bigint not null check (last_sequence > 0),
  primary key (business_id, livemode)
);

create table events (
  id             text primary key,
  business_id    uuid not null references businesses(id),
  livemode       boolean not null,
  sequence       bigint not null check (sequence > 0),
  type           text not null,
  order_id       text not null references orders(id),
  order_version  integer not null,
  -- {"order": <the order resource after the change>}
  data           jsonb not null,
  created_at     timestamptz not null,
  unique (business_id, livemode, sequence)
);
create index events_by_order on events (order_id);

-- The business's free cancellation window and the fee after it (docs/contracts.md section 6).
alter table platform_rates add column cancel_free_window_s integer not null default 120 check (cancel_free_window_s between 0 and 86400);
alter table platform_rates add column cancellation_fee_percent numeric(5, 2) not null default 25 check (cancellation_fee_percent between 0 and 100);
