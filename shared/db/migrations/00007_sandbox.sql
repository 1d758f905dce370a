-- The sandbox (docs/contracts.md section 8): test keys, and everything they create kept apart
-- from live data by `livemode`. A business has a wallet per mode; rate cards and platform rates
-- are shared.

alter table api_keys add column livemode boolean not null default true;

-- A wallet per business and mode; ledger entries follow their wallet.
alter table ledger_entries drop constraint ledger_entries_business_id_fkey;
alter table wallets add column livemode boolean not null default true;
alter table wallets drop constraint wallets_pkey;
alter table wallets add primary key (business_id, livemode);
alter table ledger_entries add column livemode boolean not null default true;
alter table ledger_entries add constraint ledger_entries_wallet_fkey foreign key (business_id, livemode) references wallets (business_id, livemode);
drop index ledger_credit_reference;
create unique index ledger_credit_reference on ledger_entries (business_id, livemode, reference) where kind = 'credit' and reference is not null;
drop index ledger_by_business;
create index ledger_by_business on ledger_entries (business_id, livemode, id desc);

-- Placements and their Idempotency-Keys, per mode.
alter table placements add column livemode boolean not null default true;
drop index placements_idempotency;
create unique index placements_idempotency on placements (business_id, livemode, idempotency_key) where idempotency_key is not null;

-- Test orders the sandbox courier still has to move: its sweep finds them here.
create index orders_sandbox_open on orders (updated_at) where not livemode and status in ('created', 'assigned', 'picked_up', 'failed');
