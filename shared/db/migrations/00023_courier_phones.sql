-- Courier phones in one stored form, and one enabled courier per phone (DESIGN 14). Until now a
-- phone was stored as typed (`0809 000 0016`), the courier app's login compared digits and a
-- leading + (so `+234 809 000 0016` missed it), and two couriers could share one, and with it the
-- lock on wrong codes, which counts per phone.
--
-- 1. Every phone the rule of shared/couriers/phone.ts can read becomes its E.164 form: a number
--    without a country code is Nigerian (`0` and 10 digits → `+234` and the 10), `+234 (0) …`
--    loses the written 0, `+` and 8 to 15 digits stay as they are; spaces, dashes, dots and
--    brackets are punctuation. A phone it cannot read (`123`) is left as typed: that courier
--    cannot log in to the courier app until an operator gives them their number (`courier:phone`).
with typed as (
  select id, regexp_replace(phone, '^[[:space:]]+|[[:space:]]+$', '', 'g') as text from couriers
), readable as (
  select id, text, regexp_replace(text, '[^0-9]', '', 'g') as digits from typed where text ~ '^\+?[0-9[:space:]().-]+$'
), normalised as (
  select id, case
    when left(text, 1) = '+' and left(digits, 3) = '234' then case
      when digits ~ '^2340[1-9][0-9]{9}$' then '+234' || substr(digits, 5)
      when digits ~ '^234[1-9][0-9]{9}$' then '+' || digits
    end
    when left(text, 1) = '+' then case when digits ~ '^[1-9][0-9]{7,14}$' then '+' || digits end
    when digits ~ '^0[1-9][0-9]{9}$' then '+234' || substr(digits, 2)
    when digits ~ '^234[1-9][0-9]{9}$' then '+' || digits
  end as phone
  from readable
)
update couriers c set phone = n.phone from normalised n where n.id = c.id and n.phone is not null and n.phone <> c.phone;

-- 2. Enabled couriers who now share a phone are kept as they are (disabling one here would
--    revoke tokens and strand orders without the state machine): the oldest holds the phone,
--    each later one names it in `phone_shared_with`, logs in as before (the code tells them
--    apart) and shares its lock. The unique index leaves those out, so this migration never fails
--    on existing data; every courier created from now on is refused a phone an enabled courier
--    has. Disabled couriers keep theirs and hold nothing: a number can pass to a new rider.
alter table couriers add column phone_shared_with uuid references couriers(id);
update couriers c set phone_shared_with = f.holder
from (
  select id, first_value(id) over (partition by phone order by created_at, id) as holder from couriers where disabled_at is null
) f
where f.id = c.id and f.holder <> c.id;

create unique index couriers_phone_enabled on couriers (phone) where disabled_at is null and phone_shared_with is null;
