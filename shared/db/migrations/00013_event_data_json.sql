-- An event's data is kept as the JSON text it was written as (json), not converted to jsonb
-- (npm run bench, README "Performance"): nothing queries inside it, it is only read back whole
-- to be shown or delivered, and converting a 100-event append's order resources to jsonb was
-- about a third of the append's Postgres CPU. Its keys now keep the order the API shows them in.
alter table events alter column data type json using data::json;
