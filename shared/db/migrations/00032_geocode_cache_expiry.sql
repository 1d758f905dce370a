-- Each geocode stored (a miss: an address not seen within GEOCODE_CACHE_TTL_S) also deletes up to
-- 100 expired rows, found by created_at, which had no index: while none had expired, every store
-- read the whole cache, 76 ms at a million addresses here, inside the quote that missed. The
-- index finds the expired rows, or that there are none, at once.
create index geocode_cache_created on geocode_cache (created_at);
