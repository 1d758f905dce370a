import type { CourierVehicleType, Point } from '../../shared/courier.js'
import { VEHICLE_SPEED_KMH } from '../../shared/courier.js'
import { haversineKm } from '../../shared/pricing/distance.js'
import type { Answer, CourierClient, StreamEvent } from './courier-client.js'
import { errorMessage } from '../../shared/errors/error-message.js'
import { acceptedOrder, heldOrder, heldOrders, lastHeard, offerList, offerNotice, orderNotice, refusalMessage, refusesField, type OfferNotice, type Proof } from './answers.js'
import { doorPhoto } from './door-photo.js'
import { MOVES, rideOf, towards, type Errand, type Ride } from './ride.js'
import { TokenRefusedError } from './token-refused-error.js'

/** The photo every rider takes at the door when an order asks for one. */
const PHOTO = new Uint8Array(doorPhoto())
/** Times a rider reads an order again after a refusal before leaving it to the operator: never for ever. */
const SETTLE_ROUNDS = 3
/** The server's trouble, not the order's (too many calls, a fault): the rider makes the same move at its next tick. */
const passing = (status: number) => status === 429 || status >= 500

export interface RiderOptions {
  name: string
  vehicle: CourierVehicleType
  start: Point
  /** Speed-up over the vehicle's real speed. */
  speed: number
  tickMs: number
  /** Share of offers accepted; the rest are declined. */
  acceptRate: number
  random: () => number
  log: (line: string) => void
  /** What an operator must see even with --quiet: a rider that stopped for good. */
  warn: (line: string) => void
  onDelivered: (orderId: string) => void
  /** An order the rider failed at the door and is taking back; `onReturned` once it is back with its sender. */
  onFailed: (orderId: string) => void
  onReturned: (orderId: string) => void
  /** The PIN the recipient would give at the door (from their tracking page), or null. */
  pinOf: (orderId: string) => Promise<string | null>
}

/**
 * One rider: goes available, reports its position every tick, takes offers from its stream (or
 * from `GET /offers` if a notice was missed), rides in a straight line at its vehicle's speed,
 * picks up, delivers with what the order asks (the PIN the recipient reads off their tracking
 * page, a photo of the door), and rides back towards its start. A move refused is settled with
 * what the server says of the order then (see `settle`), so a rider never sits on an order.
 */
export function startRider(client: CourierClient, options: RiderOptions) {
  let at = options.start
  let errand: Errand = { kind: 'idle' }
  let busy = false
  // Set once the API refused the token (an operator disabled the courier): the rider has stopped.
  let refused = false
  const stop = new AbortController()
  // Every call of a running rider is abandoned when it stops: a slow or frozen API must not hold up Ctrl-C or SIGTERM.
  const call = (method: 'GET' | 'POST', route: string, body?: unknown) => client.call(method, route, body, stop.signal)
  const stepKm = (VEHICLE_SPEED_KMH[options.vehicle] * options.speed * options.tickMs) / 3_600_000

  const consider = async (offer: OfferNotice) => {
    if (errand.kind !== 'idle') return
    if (options.random() >= options.acceptRate) {
      await call('POST', `/offers/${offer.offer_id}/decline`, { reason: 'simulated decline' })
      options.log(`${options.name} declined ${offer.order_id}`)
      return
    }
    const accepted = await call('POST', `/offers/${offer.offer_id}/accept`)
    if (accepted.status !== 200) {
      options.log(`${options.name}: the offer of ${offer.order_id} was gone (${accepted.status} ${refusalMessage(accepted.body)})`)
      return
    }
    const order = acceptedOrder.safeParse(accepted.body)
    if (!order.success) {
      options.log(`${options.name}: the accepted ${offer.order_id} came without its pickup and dropoff`)
      return
    }
    const { pickup, dropoff, proof } = order.data
    const from = { lat: pickup.latitude, lng: pickup.longitude }
    errand = { kind: 'to_pickup', orderId: offer.order_id, target: from, pickup: from, dropoff: { lat: dropoff.latitude, lng: dropoff.longitude }, proof }
    options.log(`${options.name} accepted ${offer.order_id}, ${haversineKm(at, errand.target).toFixed(1)} km to the pickup`)
  }

  const onEvent = ({ event, data }: StreamEvent) => {
    const offer = event === 'offer' ? offerNotice.safeParse(data) : null
    if (offer?.success) void guarded(() => consider(offer.data))
    // Cancelled, or handed back by an operator: the order is no longer theirs to carry.
    // Given an order by an operator: ridden like an accepted one, if the rider is free.
    const given = event === 'order_assigned' ? orderNotice.safeParse(data) : null
    if (given?.success) void guarded(() => takeOn(given.data.order_id))
    const gone = event === 'order_cancelled' || event === 'order_unassigned' ? orderNotice.safeParse(data) : null
    if (gone?.success && errand.kind !== 'idle' && errand.orderId === gone.data.order_id) {
      options.log(`${options.name}: ${errand.orderId} was ${event === 'order_cancelled' ? 'cancelled' : 'handed back'}`)
      errand = { kind: 'idle' }
    }
  }

  /** An order an operator gave the rider: read in full, then ridden from where the rider is. */
  const takeOn = async (orderId: string) => {
    if (errand.kind !== 'idle') return
    const order = heldOrder.safeParse((await call('GET', `/orders/${orderId}`)).body)
    if (!order.success) return
    errand = rideOf(order.data)
    options.log(`${options.name} was given ${orderId} by an operator`)
  }

  /** The token is revoked: said once, and the rider stops instead of knocking every tick for ever. */
  const retire = (err: TokenRefusedError) => {
    if (refused) return
    refused = true
    clearInterval(timer)
    stop.abort()
    options.warn(`${options.name}: its token was refused (401 ${err.message}), perhaps by courier:disable; rider stopped`)
  }

  /** One step at a time: a tick and a stream event never act on the same errand at once. */
  const guarded = async (step: () => Promise<void>) => {
    if (busy || refused) return
    busy = true
    try {
      await step()
    } catch (err) {
      if (err instanceof TokenRefusedError) retire(err)
      else if (!stop.signal.aborted) options.log(`${options.name}: ${errorMessage(err)}`)
    } finally {
      busy = false
    }
  }

  const tick = async () => {
    // Between orders a rider heads back to where it started, as riders drift back to busy areas.
    at = towards(at, errand.kind === 'idle' ? options.start : errand.target, stepKm)
    await call('POST', '/location', { latitude: at.lat, longitude: at.lng })
    if (errand.kind === 'idle') {
      const offers = await call('GET', '/offers')
      const listed = offerList.safeParse(offers.body)
      const [first] = listed.success ? listed.data.data : []
      if (first) await consider(first)
      return
    }
    if (haversineKm(at, errand.target) > 0.01) return
    const ride = errand
    const route = MOVES[ride.kind]
    const moved = route === 'deliver' ? await deliver(ride.orderId, ride.proof) : await call('POST', `/orders/${ride.orderId}/${route}`)
    if (moved.status === 200) arrived(ride)
    else if (passing(moved.status)) options.log(`${options.name}: ${route} of ${ride.orderId} answered ${moved.status}; trying again`)
    else await settle(ride, route, moved)
  }

  /** The move at this end went through: on to the next end, or done. */
  const arrived = (ride: Ride) => {
    if (ride.kind === 'to_pickup') {
      options.log(`${options.name} picked up ${ride.orderId}`)
      errand = { ...ride, kind: 'to_dropoff', target: ride.dropoff }
    } else if (ride.kind === 'to_return') {
      options.log(`${options.name} returned ${ride.orderId} to its sender`)
      options.onReturned(ride.orderId)
      errand = { kind: 'idle' }
    } else {
      options.log(`${options.name} delivered ${ride.orderId}`)
      options.onDelivered(ride.orderId)
      errand = { kind: 'idle' }
    }
  }

  /**
   * A move refused for something the rider cannot mend (the order moved meanwhile, a PIN the
   * recipient did not have or that is locked, a photo refused): as a rider's app would, it reads
   * the order again and does what the server's answer calls for. No longer theirs, or at rest
   * (404): dropped, and the rider takes offers again. Further along than the ride knew (an operator
   * failed it): ridden on from there. Still where the refused move found it: given up through the
   * API so it is not stranded, failed at the door and taken back, or handed back before pickup. A
   * give-up refused in turn is read again, at most SETTLE_ROUNDS times; an order the rider can
   * neither move nor give up is left to the operator, on stderr. Only a server at fault (429, 5xx)
   * keeps the ride as it was, for the next tick.
   */
  const settle = async (ride: Ride, route: string, refused: Answer) => {
    const said = refusalMessage(refused.body)
    const refusal = `${route} of ${ride.orderId} refused (${refused.status}${said ? ` ${said}` : ''})`
    // What the business reads in the order's history.
    const reason = route === 'deliver' && refusesField(refused.body, 'pin') ? 'the recipient gave no right PIN' : `could not ${route}: ${said || refused.status}`.slice(0, 255)
    for (let round = 0; round < SETTLE_ROUNDS; round++) {
      const read = await call('GET', `/orders/${ride.orderId}`)
      if (read.status === 404) {
        options.log(`${options.name}: ${refusal}; no longer theirs, dropped`)
        errand = { kind: 'idle' }
        return
      }
      // The server at fault: the move again at the next tick, and this again if it is refused.
      if (passing(read.status)) return
      const order = heldOrder.safeParse(read.body)
      if (read.status !== 200 || !order.success) break
      const now = rideOf(order.data)
      if (now.kind !== ride.kind) {
        options.log(`${options.name}: ${refusal}; it is ${order.data.status} now, carrying on`)
        errand = now
        return
      }
      if (order.data.status === 'failed') break // its return refused: the API has no other way to be rid of it
      const pickedUp = order.data.status === 'picked_up'
      const given = await call('POST', `/orders/${ride.orderId}/${pickedUp ? 'fail' : 'unassign'}`, { reason })
      if (passing(given.status)) return
      if (given.status !== 200) continue
      options.log(`${options.name}: ${refusal}; ${pickedUp ? 'failed it, taking it back' : 'handed it back'}`)
      if (pickedUp) options.onFailed(ride.orderId)
      errand = pickedUp ? { ...now, kind: 'to_return', target: now.pickup } : { kind: 'idle' }
      return
    }
    options.warn(`${options.name}: ${refusal}; could not give it up through the API, left for the operator`)
    errand = { kind: 'idle' }
  }

  /** At the door: the PIN when the order asks for one, as JSON, or with the photo as multipart when it asks for a photo. */
  const deliver = async (orderId: string, proof: Proof) => {
    const pin = proof.pin_required ? await options.pinOf(orderId).catch(() => null) : null
    if (!proof.photo_required) return call('POST', `/orders/${orderId}/deliver`, pin ? { pin } : {})
    const form = new FormData()
    if (pin) form.append('pin', pin)
    form.append('photo', new Blob([PHOTO], { type: 'image/png' }), 'door.png')
    return call('POST', `/orders/${orderId}/deliver`, form)
  }

  /**
   * An order held from a run stopped mid-delivery (the riders keep their ids): ridden on from
   * where the rider was last heard from, as its tracking page showed it. Left alone it would stay
   * assigned for ever, and the rider, at capacity, would never be offered another.
   */
  const resume = async () => {
    const held = heldOrders.safeParse((await call('GET', '/orders')).body)
    const order = held.success ? held.data.data[0] : undefined
    if (!order) return
    errand = rideOf(order)
    const heard = lastHeard.safeParse((await call('GET', '/me')).body)
    const fix = heard.success ? heard.data.location : null
    if (fix) at = { lat: fix.latitude, lng: fix.longitude }
    options.log(`${options.name} carries on with ${order.order_id} (${order.status}) from ${at.lat.toFixed(4)}, ${at.lng.toFixed(4)}`)
  }

  const timer = setInterval(() => void guarded(tick), options.tickMs)
  const ready = (async () => {
    await guarded(resume)
    if (refused) return
    // Anything but a refused token rejects `ready`: the simulator cannot start without the API.
    try {
      await call('POST', '/shift', { status: 'available' })
      await call('POST', '/location', { latitude: at.lat, longitude: at.lng })
    } catch (err) {
      if (err instanceof TokenRefusedError) return retire(err)
      throw err
    }
    client.follow(onEvent, stop.signal).catch((err: unknown) => {
      if (err instanceof TokenRefusedError) retire(err)
    })
  })()
  return {
    ready,
    /**
     * Stops the rider and takes it off shift: 'offline' once the API said so, 'refused' for a rider
     * already stopped by a refused token, 'unconfirmed' when the API did not answer within `deadlineMs`
     * (the courier then drops out of dispatch when its last ping goes stale).
     */
    async stop(deadlineMs = 2000): Promise<'offline' | 'refused' | 'unconfirmed'> {
      clearInterval(timer)
      stop.abort()
      if (refused) return 'refused'
      const answer = await client.call('POST', '/shift', { status: 'offline' }, AbortSignal.timeout(deadlineMs)).catch(() => null)
      return answer?.status === 200 ? 'offline' : 'unconfirmed'
    },
  }
}
