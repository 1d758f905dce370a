-- Proof of delivery by PIN (DESIGN 14): the 4-digit code a shipment asked for, the wrong tries
-- (the fifth locks delivery), when the right one was given, and where the courier was then.
-- The PIN and the place are personal data: erased with the order's other personal fields.
alter table orders
  add column delivery_pin     text,
  add column pin_attempts     integer not null default 0,
  add column pin_verified_at  timestamptz,
  add column delivered_lat    float8,
  add column delivered_lng    float8;
