-- A placement keeps one typed outcome (shared/placement/outcome.ts) instead of an HTTP status and
-- body, and its shipments, so a queued job carries ids only.
alter table placements add column outcome jsonb;
alter table placements add column shipments jsonb not null default '[]';
alter table placements add column personal_data_erased_at timestamptz;

-- Stored answers become outcomes; amounts go back to kobo.
update placements set outcome = case
  when status_code = 201 then jsonb_build_object(
    'kind', 'placed',
    'currency', response->>'currency',
    'chargedTotal', round((response->>'charged_total')::numeric * 100)::bigint,
    'orders', (select coalesce(jsonb_agg(jsonb_build_object('orderId', o->>'order_id', 'price', round((o->>'price')::numeric * 100)::bigint)), '[]')
               from jsonb_array_elements(response->'orders') o))
  when response->>'message' = 'Insufficient wallet balance' then jsonb_build_object(
    'kind', 'insufficient_balance',
    'currency', response->>'currency',
    'required', round((response->>'required')::numeric * 100)::bigint,
    'available', round((response->>'available')::numeric * 100)::bigint)
  else jsonb_build_object('kind', 'unpriceable', 'errors', coalesce(response->'errors', '[]'))
end
where status_code is not null and response is not null;

-- Pending rows from before carried their shipments in the job, which the new worker does not
-- read: nothing was charged for them, so they are settled as not processed and their keys freed.
update placements set status = 'failed', outcome = '{"kind": "not_processed"}', idempotency_key = null, completed_at = now()
where status = 'pending';

alter table placements drop column status_code;
alter table placements drop column response;
alter table placements alter column shipments drop default;
alter table placements add constraint placements_outcome_when_settled check ((status = 'pending') = (outcome is null));
-- The settler and the retention sweep look for old rows by state.
create index placements_pending on placements (created_at) where status = 'pending';
create index placements_personal_data on placements (created_at) where personal_data_erased_at is null and status <> 'pending';
