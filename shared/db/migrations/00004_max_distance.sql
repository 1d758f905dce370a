-- Local means local (docs/contracts.md): the longest trip, in road km, that quotes and placements accept.
alter table platform_rates add column max_distance_km numeric not null default 80 check (max_distance_km > 0);
