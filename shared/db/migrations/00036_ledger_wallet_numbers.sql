-- A wallet transaction's public id was the ledger's global row number (`txn_<id>`), and the
-- statement's cursor held it too: from the gaps between two of its own entries, a business could
-- read how many ledger entries the whole platform wrote in between, across every business and
-- both modes. Each wallet now numbers its own entries, 1, 2, 3 …, taken under the wallet's row
-- lock like the balance (`wallets.entries` is the last number given), and has a random name of
-- its own (`ledger_name`, 64 bits), so `txn_<name>_<number>` is unique across the platform and
-- tells a business only what its own statement already shows; the cursor holds the number. The
-- statement is ordered by the number exactly as it was by the id: both are taken under the lock.
alter table wallets add column entries bigint not null default 0;
-- Upper-case hex, whose digits are all Crockford base32 like the platform's other ids.
alter table wallets add column ledger_name text not null default upper(substr(md5(gen_random_uuid()::text), 1, 16));
create unique index wallets_ledger_name on wallets (ledger_name);
alter table ledger_entries add column seq bigint;

update ledger_entries l set seq = numbered.seq
from (select id, row_number() over (partition by business_id, livemode order by id) as seq from ledger_entries) numbered
where l.id = numbered.id;
update wallets w set entries = counted.entries
from (select business_id, livemode, count(*) as entries from ledger_entries group by business_id, livemode) counted
where w.business_id = counted.business_id and w.livemode = counted.livemode;

alter table ledger_entries alter column seq set not null;
alter table ledger_entries add constraint ledger_seq_positive check (seq > 0);
-- The statement's index, now by number (and unique: one entry per number of a wallet).
create unique index ledger_by_wallet on ledger_entries (business_id, livemode, seq desc);
drop index ledger_by_business;
drop index ledger_credits_refunds;
create index ledger_credits_refunds on ledger_entries (business_id, livemode, seq desc)
  where kind in ('credit', 'refund');

-- The image before this one writes entries without a number. It runs beside the new one during a
-- rolling deploy, and alone after a rollback: its entries are numbered here, under the wallet's
-- row lock its statement already holds. Only those: the new code numbers its own, and the WHEN
-- keeps this off its path. A later release, when no such image can run, drops it. A BEFORE
-- trigger runs before ON CONFLICT is looked at, so a credit whose reference was credited before
-- (that image's retry) is skipped here, as its ON CONFLICT DO NOTHING would skip it, and takes
-- no number.
create function ledger_entry_number() returns trigger language plpgsql as $$
begin
  if new.kind = 'credit' and new.reference is not null and exists (
    select 1 from ledger_entries
    where business_id = new.business_id and livemode = new.livemode and kind = 'credit' and reference = new.reference) then
    return null;
  end if;
  update wallets set entries = entries + 1
  where business_id = new.business_id and livemode = new.livemode
  returning entries into new.seq;
  return new;
end
$$;
create trigger ledger_entry_number before insert on ledger_entries
  for each row when (new.seq is null) execute function ledger_entry_number();
