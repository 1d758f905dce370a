-- The recipient's tracking page (DESIGN 14): each order's link, and the token (128 bits, random)
-- the console finds it by, without a login. Erasure removes the token: the page then answers 404.
alter table orders
  add column tracking_url    text,
  add column tracking_token  text;
create unique index orders_tracking_token on orders (tracking_token) where tracking_token is not null;
