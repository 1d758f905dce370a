-- The courier app's login, `courier:create` and `courier:phone` find enabled couriers by phone,
-- couriers sharing one included (migration 00023), so the unique index, which leaves those out,
-- cannot answer them: each lookup read every courier. This one holds every enabled courier's phone.
create index couriers_phone_lookup on couriers (phone) where disabled_at is null;
