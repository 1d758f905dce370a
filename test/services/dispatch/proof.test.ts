import t from 'tap'
import { findCourier } from '../../../shared/db/couriers.js'
import { insertOffer } from '../../../shared/db/offers.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { newOfferId } from '../../../shared/ids.js'
import { changeOrder, PIN_TRIES } from '../../../shared/orders/change.js'
import { seedAccount } from '../../helpers/accounts.js'
import { onShift, placeOrders } from '../../helpers/couriers.js'
import { PLACE } from '../../helpers/gateway.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// Proof of delivery by PIN (DESIGN 14): a shipment asks for it, placement makes a 4-digit PIN the
// business sees and a courier never does; the courier's delivery needs it, a wrong one is a 400,
// the fifth a 409 that locks the courier's delivery; the operator may still deliver.
const { gateway, db } = await startStack(t)
const account = await seedAccount(db.sql, { balance: 1_000_000 })
const business = bearer(account.apiKey)
const read = async (orderId: string) => (await gateway.inject({ method: 'GET', url: `/v2/business/orders/${orderId}`, headers: business })).json()

t.test('the PIN: shown to the business, never to the courier, checked at the door, locked after five wrong', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Pin Rider', ISLAND)
  const [locked, verified, plain] = await placeOrders(gateway, account.apiKey, [shipment({ proof: { pin: true } }), shipment({ proof: { pin: true, photo: false } }), shipment()])
  const lockedOrder = await read(locked!)
  t.match(lockedOrder, { proof: { pin: true }, delivery_pin: /^\d{4}$/, proof_of_delivery: null }, 'the business sees the PIN it asked for')
  t.equal((await read(plain!)).delivery_pin, null, 'no PIN when none was asked for')

  // Offered and accepted through the courier API: nothing the courier reads carries the PIN.
  const offer = await insertOffer(db.sql, { id: newOfferId(), orderId: locked!, courierId: rider.id, offerS: 600 })
  const seen: [string, Awaited<ReturnType<typeof gateway.inject>>][] = [
    ['offers', await gateway.inject({ method: 'GET', url: '/v2/courier/offers', headers: rider.auth })],
    ['accept', await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer!.id}/accept`, headers: rider.auth })],
    ['pickup', await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${locked}/pickup`, headers: rider.auth })],
    ['me', await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: rider.auth })],
  ]
  t.same(seen.map(([, response]) => response.statusCode), [200, 200, 200, 200])
  t.match(seen[0]![1].json().data, [{ order_id: locked, distance_to_pickup_km: Number }], 'an offer says how far the pickup is from the courier')
  for (const [route, response] of seen) t.notOk(/"(delivery_)?pin"|"price"/.test(response.body), `${route}: no PIN and no price`)
  t.match(seen[1]![1].json(), { proof: { pin_required: true, photo_required: false } }, 'the accept answer says the door needs a PIN (not which)')

  const deliver = (orderId: string, payload: Record<string, unknown>) => gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: rider.auth, payload })
  const none = await deliver(locked!, {})
  t.equal(none.statusCode, 400)
  t.equal(none.json().message, `a PIN is required to deliver ${locked}`)
  t.same(none.json().errors, [{ field: 'pin', message: `a PIN is required to deliver ${locked}` }], 'the refusal names the pin field, for a client to act on')
  // A blank field is no PIN, not a wrong one: as many as a client sends, none counts as a try.
  for (let attempt = 0; attempt <= PIN_TRIES; attempt++) {
    const blank = await deliver(locked!, { pin: attempt % 2 === 0 ? '' : '   ' })
    t.equal(blank.json().message, `a PIN is required to deliver ${locked}`, `blank PIN ${attempt + 1}: no PIN`)
  }
  const wrongPin = lockedOrder.delivery_pin === '0000' ? '0001' : '0000'
  for (let attempt = 1; attempt < PIN_TRIES; attempt++) {
    const wrong = await deliver(locked!, { pin: wrongPin })
    t.equal(wrong.statusCode, 400, `wrong PIN ${attempt}: 400`)
    t.match(wrong.json(), { statusCode: 400, message: `Wrong PIN for ${locked}`, errors: [{ field: 'pin' }], path: `/v2/courier/orders/${locked}/deliver` })
  }
  const fifth = await deliver(locked!, { pin: wrongPin })
  t.equal(fifth.statusCode, 409, `the ${PIN_TRIES}th wrong PIN locks the delivery`)
  t.equal(fifth.json().message, `Too many wrong PINs for ${locked}`)
  const tooLate = await deliver(locked!, { pin: lockedOrder.delivery_pin })
  t.equal(tooLate.statusCode, 409, 'even the right PIN is refused once locked')
  t.match(await read(locked!), { status: 'picked_up', version: 3 }, 'the refused deliveries moved nothing')

  // The operator finishes it (the courier could fail it instead): delivered, nothing verified.
  const byOperator = await changeOrder(db.sql, { orderId: locked!, scope: null }, { kind: 'advance', to: 'delivered', courier: null, reason: null })
  t.equal(byOperator.kind, 'changed')
  t.match((await read(locked!)).proof_of_delivery, { pin_required: true, pin_verified: false, photo_required: false, photo_url: null })

  // The right PIN delivers, and the business reads when and where.
  const row = (await findCourier(db.sql, rider.id))!
  for (const orderId of [verified!, plain!]) {
    t.equal((await changeOrder(db.sql, { orderId, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(row), reason: null })).kind, 'changed')
    t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/pickup`, headers: rider.auth })).statusCode, 200)
  }
  const right = await deliver(verified!, { pin: (await read(verified!)).delivery_pin })
  t.equal(right.statusCode, 200, right.body)
  const delivered = await read(verified!)
  t.same(delivered.proof_of_delivery, {
    pin_required: true, pin_verified: true, photo_required: false, photo_url: null,
    delivered_at: delivered.history.at(-1).at, latitude: ISLAND.lat, longitude: ISLAND.lng,
  }, 'verified, with when and where the courier was')
  const events = (await gateway.inject({ method: 'GET', url: '/v2/business/events?limit=100', headers: business })).json().data
  const deliveredEvent = events.find((event: { type: string; data: { order: { order_id: string } } }) => event.type === 'order.delivered' && event.data.order.order_id === verified)
  t.same(deliveredEvent?.data.order.proof_of_delivery, delivered.proof_of_delivery, 'the order.delivered event carries the proof')

  t.equal((await deliver(plain!, {})).statusCode, 200, 'an order without a PIN is delivered without one')
  t.match((await read(plain!)).proof_of_delivery, { pin_required: false, pin_verified: false, latitude: ISLAND.lat })
})

t.test('proof must be an object of booleans', async (t) => {
  for (const [proof, message] of [[{ photo: 'yes' }, 'proof.photo must be a boolean value'], ['yes', 'proof must be an object'], [{ pin: 'yes' }, 'proof.pin must be a boolean value']] as const) {
    const refused = await gateway.inject({ method: 'POST', url: PLACE, headers: business, payload: [shipment({ proof })] })
    t.equal(refused.statusCode, 400, JSON.stringify(proof))
    t.match(refused.json(), { message: `[0].${message}`, errors: [{ index: 0, field: message.split(' ')[0], message: `[0].${message}` }] }, 'the error names the field inside proof')
  }
  // null counts as omitted, inside proof too (DESIGN 2).
  const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: business, payload: [shipment({ proof: { pin: true, photo: null } }), shipment({ proof: { pin: null } })] })
  t.equal(placed.statusCode, 201, placed.body)
  const [pinned, plain] = await Promise.all(placed.json().orders.map((order: { order_id: string }) => read(order.order_id)))
  t.same([pinned.proof, plain.proof], [{ pin: true }, {}], 'each null field as if it was not sent')
  t.match(pinned.delivery_pin, /^\d{4}$/)
  t.equal(plain.delivery_pin, null)
})
