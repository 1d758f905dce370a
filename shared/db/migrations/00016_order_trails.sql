-- Where the courier went while an order was theirs (DESIGN 14): one point per 30 s at most,
-- bounded per order, personal data erased with the order's other personal fields.
create table order_trail_points (
  order_id   text not null references orders(id),
  at         timestamptz not null,
  latitude   float8 not null,
  longitude  float8 not null,
  primary key (order_id, at)
);
