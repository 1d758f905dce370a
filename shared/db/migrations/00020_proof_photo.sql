-- Proof of delivery by photo (DESIGN 14): where the courier's photo is kept in the photo store,
-- and the link the business reads it by. Personal data: erased (and the photo removed from the
-- store) with the order's other personal fields.
alter table orders
  add column photo_key  text,
  add column photo_url  text;
