import type { Sql } from '../../shared/db/sql.js'
import { createdCourier } from './courier-accounts.js'
import { waitForValue } from './processes.js'

/*
 * Couriers against gateways that run as processes (the launcher's): made as `courier:create`
 * makes them, on shift and located over HTTP, accepting offers over HTTP. The offers
 * themselves are read from the database, the source of truth.
 */

export interface HttpCourier {
  id: string
  auth: Record<string, string>
}

async function call(url: string, auth: Record<string, string>, body?: unknown): Promise<Response> {
  return fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10000),
  })
}

/** A new courier, offline, as `courier:create` makes one. */
export async function newCourier(sql: Sql, name: string): Promise<HttpCourier> {
  const created = await createdCourier(sql, { name })
  return { id: created.courier.id, auth: { authorization: `Bearer ${created.token}` } }
}

/** On shift at `at`, through the gateway at `baseUrl` (`…/v2`). */
export async function goOnShift(baseUrl: string, courier: HttpCourier, at: { lat: number; lng: number }): Promise<void> {
  const shift = await call(`${baseUrl}/courier/shift`, courier.auth, { status: 'available' })
  if (shift.status !== 200) throw new Error(`shift: ${shift.status} ${await shift.text()}`)
  if ((await pingOverHttp(baseUrl, courier, at)) !== 204) throw new Error('the first location ping was refused')
}

/** A new courier on shift at `at`. */
export async function courierOnShift(baseUrl: string, sql: Sql, name: string, at: { lat: number; lng: number }): Promise<HttpCourier> {
  const courier = await newCourier(sql, name)
  await goOnShift(baseUrl, courier, at)
  return courier
}

/** One event of a courier's stream: its name and its JSON data. */
export interface StreamEvent {
  event: string
  data: Record<string, unknown>
}

export interface CourierStream {
  /** The events received so far, in order. */
  events: StreamEvent[]
  /** Waits for an event of this name about the order; undefined if none came within `timeoutMs`. */
  next: (event: string, orderId: string, timeoutMs?: number) => Promise<StreamEvent | undefined>
  close: () => void
}

/** The courier's Server-Sent Events stream, open (past its `: connected` line). */
export async function openStream(baseUrl: string, courier: HttpCourier): Promise<CourierStream> {
  const abort = new AbortController()
  const response = await fetch(`${baseUrl}/courier/stream`, { headers: courier.auth, signal: abort.signal })
  if (response.status !== 200 || !response.body) throw new Error(`stream: ${response.status}`)
  const events: StreamEvent[] = []
  let connected = false
  void (async () => {
    let buffer = ''
    for await (const text of response.body!.pipeThrough(new TextDecoderStream())) {
      buffer += text
      // Whole messages only: a chunk may end inside one.
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const lines = buffer.slice(0, end).split('\n')
        buffer = buffer.slice(end + 2)
        connected ||= lines.includes(': connected')
        const event = lines.find((line) => line.startsWith('event: '))?.slice(7)
        const data = lines.find((line) => line.startsWith('data: '))?.slice(6)
        if (event) events.push({ event, data: data ? JSON.parse(data) : {} })
      }
    }
  })().catch(() => undefined)
  if (!(await waitForValue(async () => connected, (value) => value, 10000, 50)).held) throw new Error('the stream did not connect')
  const next = async (event: string, orderId: string, timeoutMs = 10000) => (await waitForValue(
    async () => events.find((seen) => seen.event === event && seen.data.order_id === orderId), (found) => found !== undefined, timeoutMs, 50)).value
  return { events, next, close: () => abort.abort() }
}

/** A location ping, sent again while the one-a-second limit (or a Redis failover) turns it away; the last status. */
export async function pingOverHttp(baseUrl: string, courier: HttpCourier, at: { lat: number; lng: number }, timeoutMs = 10000): Promise<number> {
  const sent = await waitForValue(
    () => call(`${baseUrl}/courier/location`, courier.auth, { latitude: at.lat, longitude: at.lng }).then((response) => response.status, () => 0),
    (status) => status === 204, timeoutMs, 200)
  return sent.value
}

/**
 * The courier's pending offer whose time is not up, from the database, other than those in
 * `passed`; null if none came within `timeoutMs`.
 */
export async function pendingOfferOf(sql: Sql, courierId: string, timeoutMs: number, passed: ReadonlySet<string> = new Set()): Promise<{ id: string; orderId: string } | null> {
  const seen = await waitForValue(
    () => sql<{ id: string; orderId: string }[]>`
      select id, order_id from dispatch_offers where courier_id = ${courierId} and status = 'pending' and expires_at > now() order by created_at`,
    (rows) => rows.some((row) => !passed.has(row.id)), timeoutMs, 100)
  return seen.value.find((row) => !passed.has(row.id)) ?? null
}

/**
 * Accepts the courier's pending offer over HTTP; one refused (409: its time ran out before a
 * dispatcher's expiry job closed it) is followed by the next. The last answer, or status 0 if no
 * offer came within `timeoutMs`.
 */
export async function acceptAnOffer(sql: Sql, baseUrl: string, courier: HttpCourier, timeoutMs: number): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + timeoutMs
  const refused = new Set<string>()
  let last = { status: 0, body: 'no offer came' }
  for (let offer = await pendingOfferOf(sql, courier.id, timeoutMs); offer; offer = await pendingOfferOf(sql, courier.id, deadline - Date.now(), refused)) {
    const response = await courierPost(baseUrl, courier, `offers/${offer.id}/accept`)
    last = { status: response.status, body: await response.text() }
    if (response.status !== 409) break
    refused.add(offer.id)
  }
  return last
}

/** A courier's POST to `route` under `…/v2/courier/` (`offers/off_…/decline`, `orders/ORD-…/pickup`). */
export function courierPost(baseUrl: string, courier: HttpCourier, route: string, body: unknown = {}): Promise<Response> {
  return call(`${baseUrl}/courier/${route}`, courier.auth, body)
}

/** Accepts the offer over HTTP; the status (200 when the order is now the courier's). */
export async function acceptOverHttp(baseUrl: string, courier: HttpCourier, offerId: string): Promise<number> {
  const response = await courierPost(baseUrl, courier, `offers/${offerId}/accept`)
  await response.arrayBuffer()
  return response.status
}

/** Orders with more than one accepted offer, or assigned more than once: what must never be. */
export async function doubleAssignments(sql: Sql, businessIds: string[]): Promise<{ id: string; accepted: number; assignedEvents: number }[]> {
  return sql<{ id: string; accepted: number; assignedEvents: number }[]>`
    select o.id, (select count(*)::int from dispatch_offers d where d.order_id = o.id and d.status = 'accepted') as accepted,
           (select count(*)::int from events e where e.order_id = o.id and e.type = 'order.assigned') as assigned_events
    from orders o where o.business_id in ${sql(businessIds)}
    and ((select count(*) from dispatch_offers d where d.order_id = o.id and d.status = 'accepted') > 1
      or (select count(*) from events e where e.order_id = o.id and e.type = 'order.assigned') > 1)`
}
