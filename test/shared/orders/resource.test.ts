import t from 'tap'
import type { Order } from '../../../shared/db/orders.js'
import { DEFAULT_PLATFORM_RATES } from '../../../shared/db/platform-rates.js'
import { orderAsShown } from '../../../shared/orders/resource.js'
import { orderSchema } from '../../../shared/schemas/order.js'
import { shipmentSchema } from '../../../shared/schemas/shipment.js'

const ORDER: Order = {
  id: 'ORD-7K2M9XQ4TB',
  placementId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
  businessId: '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed',
  livemode: true,
  position: 0,
  status: 'assigned',
  version: 2,
  price: 350_050,
  currency: 'NGN',
  pricingModel: 'rate_card',
  vehicleType: 'bike',
  optionId: 'opt_0123456789AB',
  optionLabel: 'Up to 5 kg',
  deliveryMode: 'MOTORBIKE',
  distanceKm: 27.07,
  fromZoneName: 'Island',
  toZoneName: 'Ikeja',
  shipment: { dropoff_address: '5 Allen Avenue, Ikeja', dropoff_state: 'Lagos', recipient_name: 'Chidi Okafor', recipient_phone: '+2348020000000', item_name: 'Phone case', weight: 2, quantity: 1, vehicle_type: 'bike', pickup_address: '12 Admiralty Way, Lekki', pickup_state: 'Lagos' },
  courier: { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: null },
  courierId: null,
  pickupLat: 6.4413,
  pickupLng: 3.4714,
  dropoffLat: 6.6018,
  dropoffLng: 3.3515,
  deliveryPin: null,
  pinAttempts: 0,
  pinVerifiedAt: null,
  deliveredLat: null,
  deliveredLng: null,
  photoKey: null,
  photoUrl: null,
  trackingUrl: 'http://localhost:3004/t/q1Xr8mZ0Lw3sKpT9vB2nCA',
  trackingToken: 'q1Xr8mZ0Lw3sKpT9vB2nCA',
  history: [{ status: 'created', at: '2026-11-22T10:00:00.000Z' }, { status: 'assigned', at: '2026-11-22T10:01:00.000Z' }],
  assignedAt: new Date('2026-11-22T10:01:00.000Z'),
  refundedAmount: 0,
  createdAt: new Date('2026-11-22T10:00:00.000Z'),
  updatedAt: new Date('2026-11-22T10:01:00.000Z'),
}

t.test('the order resource has exactly the documented fields, in major units', async (t) => {
  const shown = orderAsShown(ORDER, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:02:00.000Z'))
  const parsed = orderSchema.strict().safeParse(shown)
  t.ok(parsed.success, parsed.success ? 'matches the OpenAPI schema, no field more' : JSON.stringify(parsed.error.issues))
  // sandbox_scenario is a test order's field only.
  const live = Object.keys(orderSchema.shape).filter((field) => field !== 'sandbox_scenario')
  t.same(Object.keys(shown).sort(), live.sort(), 'no field less either')
  t.equal(shown.price, 3500.5)
  t.equal(shown.recipient_email, null, 'a field not sent is null')
  t.equal(shown.pickup_address, '12 Admiralty Way, Lekki')
  for (const field of Object.keys(shipmentSchema.shape).filter((name) => name !== 'sandbox_scenario')) t.ok(field in shown, `${field} is shown`)
  t.notOk('sandbox_scenario' in shown, 'not on a live order')
})

t.test('a test order shows its sandbox scenario, deliver when none was sent', async (t) => {
  const testOrder = { ...ORDER, livemode: false }
  const shown = orderAsShown(testOrder, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:02:00.000Z'))
  t.ok(orderSchema.strict().safeParse(shown).success, 'matches the OpenAPI schema')
  t.equal(shown.sandbox_scenario, 'deliver')
  const failing = orderAsShown({ ...testOrder, shipment: { ...ORDER.shipment, sandbox_scenario: 'fail' } }, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:02:00.000Z'))
  t.equal(failing.sandbox_scenario, 'fail')
})

t.test('the cancellation preview follows the free window of the latest assignment', async (t) => {
  const inside = orderAsShown(ORDER, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:02:59.999Z'))
  t.same(inside.cancellation, { cancellable: true, fee: 0, free_until: '2026-11-22T10:03:00.000Z' })
  const after = orderAsShown(ORDER, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:03:00.000Z'))
  // 25 % of 3500.50 is 875.125: half a kobo, rounded away from zero.
  t.same(after.cancellation, { cancellable: true, fee: 875.13, free_until: '2026-11-22T10:03:00.000Z' })
  const created = orderAsShown({ ...ORDER, status: 'created', courier: null, assignedAt: null }, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T11:00:00.000Z'))
  t.same(created.cancellation, { cancellable: true, fee: 0, free_until: null })
  const pickedUp = orderAsShown({ ...ORDER, status: 'picked_up' }, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:02:00.000Z'))
  t.same(pickedUp.cancellation, { cancellable: false, fee: null, free_until: null })
})

t.test('courier.location and eta (DESIGN 14): from where and when the registered courier last was', async (t) => {
  const registered = { ...ORDER, courierId: '3b9d6f2a-1c4e-4f8a-9d2b-7e5c1a0f4b63', courier: { id: '3b9d6f2a-1c4e-4f8a-9d2b-7e5c1a0f4b63', name: 'Musa Bello', phone: '+2348090000000', vehicle_type: 'bike' as const, vehicle_plate: null } }
  const now = new Date('2026-11-22T10:02:00.000Z')
  // 0.1° of latitude south of the pickup: 11.12 km straight, 14.46 km by the road factor 1.3; a bike does 25 km/h.
  const fix = { latitude: ORDER.pickupLat! - 0.1, longitude: ORDER.pickupLng!, at: '2026-11-22T10:01:30.000Z' }
  const shown = orderAsShown(registered, DEFAULT_PLATFORM_RATES, now, fix)
  t.same(shown.courier, { id: registered.courierId, name: 'Musa Bello', phone: '+2348090000000', vehicle_type: 'bike', vehicle_plate: null, location: fix })
  const km = 14.46
  t.same(shown.eta, { stage: 'pickup', at: new Date(Date.parse(fix.at) + (km / 25) * 3_600_000).toISOString() }, 'to the pickup while assigned, counted from the fix')
  t.same(orderAsShown(registered, DEFAULT_PLATFORM_RATES, new Date('2026-11-22T10:09:00.000Z'), fix).eta, shown.eta, 'every read between two fixes shows the same ETA')
  const onTheWay = orderAsShown({ ...registered, status: 'picked_up' }, DEFAULT_PLATFORM_RATES, now, fix)
  t.equal((onTheWay.eta as { stage: string }).stage, 'dropoff', 'to the dropoff once picked up')
  // The speed is the platform rates': an operator who sets bikes to 12.5 km/h doubles the time.
  const slower = orderAsShown(registered, { ...DEFAULT_PLATFORM_RATES, bikeSpeedKmh: 12.5 }, now, fix)
  t.same(slower.eta, { stage: 'pickup', at: new Date(Date.parse(fix.at) + (km / 12.5) * 3_600_000).toISOString() }, 'the vehicle\'s speed comes from the platform rates')
  t.equal(orderAsShown(registered, DEFAULT_PLATFORM_RATES, now, null).eta, null, 'no fix, no ETA')
  t.equal(orderAsShown({ ...registered, status: 'delivered' }, DEFAULT_PLATFORM_RATES, now, fix).eta, null, 'none once delivered')
  t.equal(orderAsShown(ORDER, DEFAULT_PLATFORM_RATES, now, fix).eta, null, 'none for a courier outside the system (no vehicle to time)')
  t.ok(orderSchema.safeParse(shown).success, 'the documented schema holds')
})
