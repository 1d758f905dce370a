-- The speeds an ETA divides by (DESIGN 14: "a per-vehicle speed (platform rates: bike 25, car
-- 30, bus_van 25, truck 20 km/h)"), kept with the platform rates so an operator can set them for
-- the city's traffic, as the road factor. Until now they were constants in the code.
alter table platform_rates
  add column bike_speed_kmh double precision not null default 25 check (bike_speed_kmh between 5 and 120),
  add column car_speed_kmh double precision not null default 30 check (car_speed_kmh between 5 and 120),
  add column bus_van_speed_kmh double precision not null default 25 check (bus_van_speed_kmh between 5 and 120),
  add column truck_speed_kmh double precision not null default 20 check (truck_speed_kmh between 5 and 120);
