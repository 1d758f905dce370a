import type { OrderEventType } from '../courier.js'
import type { StoredEvent } from './events.js'
import type { OrderScope } from './orders.js'
import { pastCursor, type Db, type Tx } from './sql.js'

export interface WebhookEndpoint {
  id: string
  businessId: string
  livemode: boolean
  url: string
  eventTypes: OrderEventType[] | null
  description: string | null
  secret: string
  previousSecret: string | null
  previousSecretExpiresAt: Date | null
  status: 'enabled' | 'disabled'
  disabledReason: string | null
  consecutiveFailures: number
  failingSince: Date | null
  createdAt: Date
}

export type NewWebhookEndpoint = Pick<WebhookEndpoint, 'id' | 'businessId' | 'livemode' | 'url' | 'eventTypes' | 'description' | 'secret'>

const ENDPOINT_COLUMNS = `id, business_id, livemode, url, event_types, description, secret, previous_secret,
  previous_secret_expires_at, status, disabled_reason, consecutive_failures, failing_since, created_at`

/**
 * Inserts an endpoint unless the business already has `max` in this mode. The business row is
 * locked first, so two creates at once cannot both see room for one more.
 */
export async function insertEndpointWithin(tx: Tx, endpoint: NewWebhookEndpoint, max: number): Promise<WebhookEndpoint | null> {
  await tx`select id from businesses where id = ${endpoint.businessId} for update`
  const [row] = await tx<WebhookEndpoint[]>`
    insert into webhook_endpoints (id, business_id, livemode, url, event_types, description, secret)
    select ${endpoint.id}, ${endpoint.businessId}, ${endpoint.livemode}, ${endpoint.url}, ${endpoint.eventTypes}, ${endpoint.description}, ${endpoint.secret}
    where (select count(*) from webhook_endpoints where business_id = ${endpoint.businessId} and livemode = ${endpoint.livemode} and deleted_at is null) < ${max}
    returning ${tx.unsafe(ENDPOINT_COLUMNS)}`
  return row ?? null
}

export async function listEndpoints(db: Db, scope: OrderScope): Promise<WebhookEndpoint[]> {
  return db<WebhookEndpoint[]>`
    select ${db.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints
    where business_id = ${scope.businessId} and livemode = ${scope.livemode} and deleted_at is null order by created_at, id`
}

export async function findEndpoint(db: Db, id: string, scope: OrderScope): Promise<WebhookEndpoint | null> {
  const [row] = await db<WebhookEndpoint[]>`
    select ${db.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints
    where id = ${id} and business_id = ${scope.businessId} and livemode = ${scope.livemode} and deleted_at is null`
  return row ?? null
}

/**
 * Deletes an endpoint as its owner sees it: marked, so from now on no read here finds it, no
 * event is relayed or redelivered to it, it leaves room for another, and a delivery of it already
 * queued is skipped. Its rows go in batches afterwards (`deleteDeletedEndpointDeliveries`), so a delete
 * costs one row whatever the endpoint's history. False when the caller has no such endpoint.
 */
export async function deleteEndpoint(db: Db, id: string, scope: OrderScope): Promise<boolean> {
  const rows = await db`
    update webhook_endpoints set deleted_at = now()
    where id = ${id} and business_id = ${scope.businessId} and livemode = ${scope.livemode} and deleted_at is null returning id`
  return rows.length > 0
}

/**
 * Up to `limit` deliveries of deleted endpoints (their attempts go with them, by the foreign key's
 * cascade on its index), skipping rows another purge holds. Returns how many went.
 */
export async function deleteDeletedEndpointDeliveries(db: Db, limit: number): Promise<number> {
  const result = await db`
    delete from webhook_deliveries where id = any(array(
      select id from webhook_deliveries
      where endpoint_id = any(array(select id from webhook_endpoints where deleted_at is not null))
      limit ${limit} for update skip locked))`
  return result.count
}

/** The deleted endpoints' rows, once they have no delivery left. */
export async function deleteEmptiedEndpoints(db: Db): Promise<void> {
  await db`
    delete from webhook_endpoints w where deleted_at is not null
      and not exists (select 1 from webhook_deliveries d where d.endpoint_id = w.id)`
}

/** Makes `secret` the signing secret; the one it replaces keeps signing until `overlapUntil`. */
export async function rotateEndpointSecret(db: Db, id: string, scope: OrderScope, secret: string, overlapUntil: Date): Promise<WebhookEndpoint | null> {
  const [row] = await db<WebhookEndpoint[]>`
    update webhook_endpoints set previous_secret = secret, previous_secret_expires_at = ${overlapUntil}, secret = ${secret}
    where id = ${id} and business_id = ${scope.businessId} and livemode = ${scope.livemode} and deleted_at is null
    returning ${db.unsafe(ENDPOINT_COLUMNS)}`
  return row ?? null
}

export type StoredSecrets = Pick<WebhookEndpoint, 'id' | 'secret' | 'previousSecret'>

export async function listEndpointSecrets(db: Db): Promise<StoredSecrets[]> {
  return db<StoredSecrets[]>`select id, secret, previous_secret from webhook_endpoints order by id`
}

/** Replaces an endpoint's stored secrets while they are still `was` (a rotation meanwhile wins); false otherwise. */
export async function replaceEndpointSecrets(db: Db, was: StoredSecrets, next: Pick<StoredSecrets, 'secret' | 'previousSecret'>): Promise<boolean> {
  const rows = await db`
    update webhook_endpoints set secret = ${next.secret}, previous_secret = ${next.previousSecret}
    where id = ${was.id} and secret = ${was.secret} and previous_secret is not distinct from ${was.previousSecret}
    returning id`
  return rows.length > 0
}

export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed'

/** One delivery of one event to one endpoint: the relay's, or a redelivery asked for. */
export interface Delivery {
  id: number
  eventId: string
  endpointId: string
  redelivery: number
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: Date
}

const DELIVERY_COLUMNS = 'id, event_id, endpoint_id, redelivery, status, attempts, next_attempt_at'

/** What an attempt needs of an endpoint: where to send, whether it may, and how to sign. */
export type EndpointToDeliver = Pick<WebhookEndpoint, 'id' | 'url' | 'status' | 'disabledReason' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>

/** What an attempt needs of an event: the resource it sends, and the trace it continues. */
export type EventToDeliver = Pick<StoredEvent, 'id' | 'livemode' | 'sequence' | 'type' | 'data' | 'createdAt' | 'traceparent'>

/** A delivery with its event and its endpoint, each null once gone (an endpoint once deleted). */
export interface DeliveryToAttempt {
  delivery: Pick<Delivery, 'id' | 'eventId' | 'endpointId' | 'status' | 'attempts' | 'nextAttemptAt'>
  event: EventToDeliver | null
  endpoint: EndpointToDeliver | null
}

interface DeliveryToAttemptRow extends Omit<EventToDeliver, 'id'>, Omit<EndpointToDeliver, 'id' | 'status'> {
  id: number
  eventId: string
  endpointId: string
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: Date
  eventFound: boolean
  endpointFound: boolean
  endpointStatus: EndpointToDeliver['status']
}

/**
 * The sender's read: deliveries by id, each with its event and its endpoint, in one statement,
 * with only the columns an attempt uses (every one is decoded for each row). Ids not found are
 * left out. Each event and endpoint is looked up by its key for its delivery (a lateral `limit 1`
 * is never turned into a join), so however the planner guesses the batch's size, it never scans
 * the events for a few deliveries.
 */
export async function findDeliveriesToAttempt(db: Db, ids: number[]): Promise<DeliveryToAttempt[]> {
  const rows = await db<DeliveryToAttemptRow[]>`
    select d.id, d.event_id, d.endpoint_id, d.status, d.attempts, d.next_attempt_at,
      e.id is not null as event_found, e.livemode, e.sequence, e.type, e.data, e.created_at, e.traceparent,
      w.id is not null as endpoint_found, w.url, w.status as endpoint_status, w.disabled_reason, w.secret, w.previous_secret, w.previous_secret_expires_at
    from webhook_deliveries d
      left join lateral (select * from events where id = d.event_id limit 1) e on true
      left join lateral (select * from webhook_endpoints where id = d.endpoint_id and deleted_at is null limit 1) w on true
    where d.id = any(${ids}::bigint[])`
  // Built field by field: a rest pattern over a row this wide was a tenth of the read's cost.
  return rows.map((row) => ({
    delivery: { id: row.id, eventId: row.eventId, endpointId: row.endpointId, status: row.status, attempts: row.attempts, nextAttemptAt: row.nextAttemptAt },
    event: row.eventFound
      ? { id: row.eventId, livemode: row.livemode, sequence: row.sequence, type: row.type, data: row.data, createdAt: row.createdAt, traceparent: row.traceparent }
      : null,
    endpoint: row.endpointFound
      ? { id: row.endpointId, url: row.url, status: row.endpointStatus, disabledReason: row.disabledReason, secret: row.secret, previousSecret: row.previousSecret, previousSecretExpiresAt: row.previousSecretExpiresAt }
      : null,
  }))
}

/**
 * Fails an open delivery whose event is gone (its month dropped by EVENT_RETENTION_D while the
 * delivery still retried): nothing is left to send. Its log ends with a failed row saying why (the
 * event's type taken from its last attempt; a delivery never tried has none to end), so the
 * business's log does not show a retry that never comes. The endpoint's failure streak is
 * untouched: it is not the endpoint's failure.
 */
export async function failDeliveryWithoutEvent(db: Db, deliveryId: number, error: string): Promise<void> {
  await db`
    with closed as (
      update webhook_deliveries set status = 'failed', updated_at = now()
      where id = ${deliveryId} and status in ('pending', 'retrying')
      returning id, endpoint_id, event_id, attempts
    )
    insert into webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at)
    select c.id, c.endpoint_id, c.event_id, last.event_type, c.attempts + 1, 'failed', null, 0, ${error}, null
    from closed c join lateral (select event_type from webhook_attempts where delivery_id = c.id order by id desc limit 1) last on true`
}

/** Any endpoint not deleted by id, whoever owns it (the caller checks the owner); the sender reads endpoints with their deliveries instead (`findDeliveriesToAttempt`). */
export async function findEndpointById(db: Db, id: string): Promise<WebhookEndpoint | null> {
  const [row] = await db<WebhookEndpoint[]>`select ${db.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints where id = ${id} and deleted_at is null`
  return row ?? null
}

/**
 * The relay's step: takes appends off the outbox, oldest first (skipping those another relay
 * holds), until they hold `limit` events or more (at least one append, so at most `limit` plus
 * one append's events), and writes one delivery per matching enabled endpoint, all in one
 * statement. A delivery already written is not written again. Returns the deliveries to queue
 * and how many events were claimed.
 */
export async function relayEvents(db: Db, limit: number): Promise<{ claimed: number; deliveries: Delivery[] }> {
  const rows = await db<(Delivery & { claimed: number })[]>`
    with chosen as (
      select id from (
        select id, sum(events) over (order by id) - events as before
        from (select id, last_sequence - first_sequence + 1 as events from event_outbox order by id limit ${limit}) head) c
      where before < ${limit}
    ), taken as (
      delete from event_outbox where id = any(array(
        select id from event_outbox where id = any(array(select id from chosen)) for update skip locked))
      returning business_id, livemode, first_sequence, last_sequence
    ), claimed as (
      -- Each append's events by their key range; offset 0 keeps the lookup per append, so the
      -- planner cannot turn it into a scan of all events.
      select e.id, e.business_id, e.livemode, e.type from taken t cross join lateral (
        select id, business_id, livemode, type from events
        where business_id = t.business_id and livemode = t.livemode and sequence between t.first_sequence and t.last_sequence
        offset 0) e
    ), endpoints as (
      -- The endpoints of the appends' owners, looked up per owner (offset 0 again): joined to the
      -- claimed events directly, the planner read every endpoint of every business.
      select w.id, w.business_id, w.livemode, w.event_types from (select distinct business_id, livemode from taken) t cross join lateral (
        select id, business_id, livemode, event_types from webhook_endpoints
        where business_id = t.business_id and livemode = t.livemode and status = 'enabled' and deleted_at is null
        offset 0) w
    ), inserted as (
      insert into webhook_deliveries (event_id, endpoint_id)
      select c.id, w.id from claimed c join endpoints w
        on w.business_id = c.business_id and w.livemode = c.livemode and (w.event_types is null or c.type = any(w.event_types))
      on conflict do nothing
      returning ${db.unsafe(DELIVERY_COLUMNS)}
    )
    select (select count(*)::int from claimed) as claimed, i.* from (select 1) one left join inserted i on true`
  const claimed = rows[0]?.claimed ?? 0
  return { claimed, deliveries: rows.filter((row) => row.id !== null).map(({ claimed: _, ...delivery }) => delivery) }
}

/**
 * One more delivery of an event to each enabled endpoint of its owner that takes its type (or to
 * `endpointId` only, when given), numbered after the last: the redelivery an integrator asks for.
 */
export async function insertRedeliveries(db: Db, eventId: string, endpointId: string | null = null): Promise<Delivery[]> {
  return db<Delivery[]>`
    insert into webhook_deliveries (event_id, endpoint_id, redelivery)
    select e.id, w.id, coalesce((select max(redelivery) from webhook_deliveries d where d.event_id = e.id and d.endpoint_id = w.id), 0) + 1
    from events e join webhook_endpoints w
      on w.business_id = e.business_id and w.livemode = e.livemode and w.status = 'enabled' and w.deleted_at is null
      and (w.event_types is null or e.type = any(w.event_types))
    where e.id = ${eventId} and (${endpointId}::text is null or w.id = ${endpointId})
    returning ${db.unsafe(DELIVERY_COLUMNS)}`
}

/** Where a sweep of overdue deliveries stopped: the last row's `next_attempt_at` as Postgres's text (`pastCursor`), and its id. */
export interface DeliverySweepCursor {
  nextAttemptAt: string
  id: number
}

/**
 * Deliveries not at rest whose attempt is overdue by `idleS` and that nothing touched for as
 * long: the sweep checks each still has its job. A retry waiting hours with its job in place
 * is not looked at until it is due, so the batch is made of the ones likely lost. Oldest due
 * first from `after`: a backlog of deliveries waiting for their endpoint's slots (their jobs in
 * place, their rows untouched) fills one page, not every sweep's, so a lost job behind it is
 * found within a few sweeps.
 */
export async function findOverdueDeliveries(db: Db, idleS: number, limit: number, after: DeliverySweepCursor | null): Promise<{ deliveries: Delivery[]; next: DeliverySweepCursor | null }> {
  const rows = await db<(Delivery & { sweptAt: string })[]>`
    select ${db.unsafe(DELIVERY_COLUMNS)}, next_attempt_at::text as swept_at from webhook_deliveries
    where status in ('pending', 'retrying') and next_attempt_at < now() - make_interval(secs => ${idleS})
      and updated_at < now() - make_interval(secs => ${idleS})
      ${after ? db`and ${pastCursor(db, 'next_attempt_at', 'id', { at: after.nextAttemptAt, id: after.id })}` : db``}
    order by next_attempt_at, id limit ${limit}`
  const last = rows.length === limit ? rows.at(-1) : undefined
  return {
    deliveries: rows.map(({ sweptAt: _, ...delivery }) => delivery),
    next: last ? { nextAttemptAt: last.sweptAt, id: last.id } : null,
  }
}

/** What one attempt came to, as the delivery log shows it. */
export interface AttemptRecord {
  deliveryId: number
  endpointId: string
  eventId: string
  eventType: string
  attempt: number
  status: 'succeeded' | 'retrying' | 'failed'
  responseStatus: number | null
  durationMs: number
  error: string | null
  nextAttemptAt: Date | null
}

/** An attempt after which its delivery has failed: the last of its schedule, a 410, or one to a disabled endpoint. */
export type FailedAttemptRecord = AttemptRecord & { status: 'failed' }

/** When failures disable an endpoint: `failedDeliveries` in a row, failing for `failingForS` seconds at least; `reason` says so. */
export interface FailureLimit {
  failedDeliveries: number
  failingForS: number
  reason: string
}

/**
 * Writes an attempt that failed its delivery in one statement (so one implicit transaction, and
 * no BEGIN/COMMIT round trips): its log row, the delivery's new state, and the endpoint's failure
 * streak, which it adds one failed delivery to (and starts, if no failed attempt had). A 410
 * (`disableReason`) disables the endpoint; so does the `limit`, once the streak holds its count
 * of failed deliveries and began its span ago. An endpoint already disabled keeps its reason.
 */
export async function recordFailedAttempt(db: Db, record: FailedAttemptRecord, endpoint: { disableReason: string | null; limit: FailureLimit }): Promise<void> {
  const { limit } = endpoint
  // Read from the row as this update finds it, so failures recorded at once each count.
  const limitReached = db`status = 'enabled' and consecutive_failures + 1 >= ${limit.failedDeliveries}
    and coalesce(failing_since, now()) <= now() - make_interval(secs => ${limit.failingForS})`
  await db`
    with attempt as (
      insert into webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at)
      values (${record.deliveryId}, ${record.endpointId}, ${record.eventId}, ${record.eventType}, ${record.attempt}, ${record.status},
        ${record.responseStatus}, ${record.durationMs}, ${record.error}, ${record.nextAttemptAt})
    ), delivery as (
      update webhook_deliveries set status = ${record.status}, attempts = ${record.attempt},
        next_attempt_at = coalesce(${record.nextAttemptAt}, next_attempt_at), updated_at = now()
      where id = ${record.deliveryId}
    )
    update webhook_endpoints set
      consecutive_failures = consecutive_failures + 1,
      failing_since = coalesce(failing_since, now()),
      status = case when ${endpoint.disableReason}::text is not null or (${limitReached}) then 'disabled' else status end,
      disabled_reason = case
        when status = 'disabled' then disabled_reason
        when ${endpoint.disableReason}::text is not null then ${endpoint.disableReason}::text
        when ${limitReached} then ${limit.reason}
        else disabled_reason end
    where id = ${record.endpointId}`
}

/** An attempt after which its delivery has succeeded or waits for its next try: to the endpoint's failure streak, a start or a reset at most. */
export type OpenAttemptRecord = AttemptRecord & { status: 'succeeded' | 'retrying' }

/**
 * Writes attempts that did not fail their delivery (a 410 always does), any number in one
 * statement: their log rows in the order given, the deliveries' new states, and each endpoint's
 * failure streak. A success ends it (count back to 0, `failing_since` null); a retrying attempt
 * starts one where none runs, at this statement's time, so the span of DESIGN 9's "10
 * consecutive failed deliveries (over 5 days)" counts from the endpoint's first failure since
 * its last success, not from the first delivery to end failed, which already failed for ~28 h
 * (the endpoint would stay enabled through six days of downtime, not five). Within the batch the
 * order given is the order of the attempts: an endpoint whose last attempt here was retrying is
 * failing, since now if one here succeeded. The endpoint row is written only when this changes
 * it; `recordFailedAttempt` writes a failed delivery's, which counts.
 */
export async function recordAttempts(db: Db, records: OpenAttemptRecord[]): Promise<void> {
  const rows = records.map((record) => ({
    delivery_id: record.deliveryId, endpoint_id: record.endpointId, event_id: record.eventId, event_type: record.eventType,
    attempt: record.attempt, status: record.status, response_status: record.responseStatus, duration_ms: record.durationMs,
    error: record.error, next_attempt_at: record.nextAttemptAt,
  }))
  await db`
    with batch as (
      select * from rows from (json_to_recordset(${JSON.stringify(rows)}::text::json)
        as (delivery_id bigint, endpoint_id text, event_id text, event_type text, attempt integer, status text,
          response_status integer, duration_ms integer, error text, next_attempt_at timestamptz))
        with ordinality as r(delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at, n)
    ), attempt as (
      insert into webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at)
      select delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at
      from batch order by n
    ), delivery as (
      update webhook_deliveries d set status = b.status, attempts = b.attempt,
        next_attempt_at = coalesce(b.next_attempt_at, d.next_attempt_at), updated_at = now()
      -- The ids as an array too, so the deliveries are found by their key whatever the batch's guessed size.
      from batch b where d.id = any(array(select delivery_id from batch)) and d.id = b.delivery_id
    ), streak as (
      select endpoint_id, bool_or(status = 'succeeded') as succeeded, (array_agg(status order by n desc))[1] = 'retrying' as failing
      from batch group by endpoint_id
    )
    update webhook_endpoints w set
      consecutive_failures = case when s.succeeded then 0 else w.consecutive_failures end,
      failing_since = case when not s.failing then null when s.succeeded then now() else coalesce(w.failing_since, now()) end
    from streak s
    where w.id = any(array(select endpoint_id from streak)) and w.id = s.endpoint_id
      and (s.succeeded and (w.consecutive_failures <> 0 or w.failing_since is not null) or s.failing and w.failing_since is null)`
}

export interface AttemptLogEntry extends AttemptRecord {
  id: number
  at: Date
}

/** An endpoint's delivery log, newest first, after the cursor's attempt id. */
export async function listAttempts(db: Db, endpointId: string, filter: { beforeId: number | null; limit: number }): Promise<AttemptLogEntry[]> {
  return db<AttemptLogEntry[]>`
    select id, delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, error, next_attempt_at, at
    from webhook_attempts where endpoint_id = ${endpointId}
      ${filter.beforeId === null ? db`` : db`and id < ${filter.beforeId}`}
    order by id desc limit ${filter.limit}`
}

/**
 * Webhook lag: seconds since the oldest delivery work still undone fell due (a pending or
 * retrying delivery whose attempt is due, or an event the relay has not yet turned into
 * deliveries); 0 when nothing is due. Both reads are on an index (webhook_deliveries_open, the
 * outbox's key).
 */
export async function webhookLagSeconds(db: Db): Promise<number> {
  const [row] = await db<{ lag: number }[]>`
    select greatest(0,
      extract(epoch from now() - (
        select min(next_attempt_at) from webhook_deliveries
        where status in ('pending', 'retrying') and next_attempt_at <= now())),
      extract(epoch from now() - (
        select e.created_at from (select business_id, livemode, first_sequence from event_outbox order by id limit 1) o
        join events e on e.business_id = o.business_id and e.livemode = o.livemode and e.sequence = o.first_sequence))
    )::float8 as lag`
  return row!.lag
}
