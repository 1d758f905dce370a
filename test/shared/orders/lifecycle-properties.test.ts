import assert from 'node:assert/strict'
import fc from 'fast-check'
import t from 'tap'
import type { Courier, OrderStatus } from '../../../shared/courier.js'
import { changeOrder, type OrderChange, type OrderChangeOutcome } from '../../../shared/orders/change.js'
import { changePlatformRates } from '../../../shared/pricing/platform-rates.js'
import { setBusinessRateCard } from '../../../shared/db/businesses.js'
import { importRateCard } from '../../../shared/pricing/rate-card-file.js'
import { demoCardFile, seedAccount, type SeededAccount } from '../../helpers/accounts.js'
import { PLACE } from '../../helpers/gateway.js'
import { IKEJA, ISLAND, LEKKI, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// Random sequences of order changes against the real database. Orders are placed through the
// real placement path (gateway → queue → worker), so their `order.created` events exist; each
// change is then made by calling `changeOrder` from shared/orders/change.ts in-process: the one
// function the operator CLI's `order:advance` and `order:cancel` and the API's cancel call. After
// every step the orders, their events and the wallet are held against a model kept here, built
// from DESIGN section 8's table and written out below on purpose, not imported from
// shared/orders/state-machine.ts, so a wrong table there shows.

type Actor = 'dispatch' | 'business' | 'operator'
type Resource = Record<string, any>

const STATUSES: OrderStatus[] = ['created', 'assigned', 'picked_up', 'delivered', 'failed', 'returned', 'cancelled']

/** DESIGN section 8, row by row. */
const TABLE: { from: OrderStatus; to: OrderStatus; by: Actor[]; event: string; reason: boolean }[] = [
  { from: 'created', to: 'assigned', by: ['dispatch'], event: 'order.assigned', reason: false },
  { from: 'created', to: 'cancelled', by: ['business', 'operator'], event: 'order.cancelled', reason: false },
  { from: 'assigned', to: 'created', by: ['dispatch'], event: 'order.unassigned', reason: true },
  { from: 'assigned', to: 'picked_up', by: ['dispatch'], event: 'order.picked_up', reason: false },
  { from: 'assigned', to: 'cancelled', by: ['business', 'operator'], event: 'order.cancelled', reason: false },
  { from: 'picked_up', to: 'delivered', by: ['dispatch'], event: 'order.delivered', reason: false },
  { from: 'picked_up', to: 'failed', by: ['dispatch'], event: 'order.failed', reason: true },
  { from: 'failed', to: 'returned', by: ['dispatch'], event: 'order.returned', reason: false },
]
const rowFor = (from: OrderStatus, to: OrderStatus, actor: Actor) => TABLE.find((row) => row.from === from && row.to === to && row.by.includes(actor))

/** Section 13.10: how a cancel refusal ends, by status. */
const TOO_LATE: Partial<Record<OrderStatus, string>> = { picked_up: 'it was picked up', delivered: 'it is delivered', failed: 'it failed', returned: 'it was returned' }

/** `percent` of `price` kobo, rounded half away from zero to the kobo (prices are positive). */
const feeOf = (price: number, percent: number) => Math.floor((price * Math.round(percent * 100) + 5000) / 10000)
const kobo = (major: number) => Math.round(major * 100)
const withoutCancellation = ({ cancellation: _ignored, ...rest }: Resource) => rest

/** What the test believes about one order. */
interface ModelOrder {
  id: string
  price: number
  status: OrderStatus
  version: number
  /** null: not asserted (after a cancel the DESIGN does not say what `courier` shows). */
  courier: Courier | null | undefined
  history: { status: OrderStatus; reason?: string }[]
  events: string[]
  refunded: number
  /** While assigned: when the free window started (ms) and whether it has run out. */
  assignedAt: number | null
  expired: boolean
  /** The order as read right after it reached each version, and the preview the model expected then. */
  reads: Map<number, Resource>
  previews: Map<number, Resource>
}

type Step =
  | { kind: 'advance'; order: number; to: OrderStatus | 'next'; pick: number; reason: string | null; courier: Courier | null }
  | { kind: 'cancel'; order: number; by: 'business' | 'operator'; reason: string | null }
  | { kind: 'expire'; order: number }
  | { kind: 'foreign_cancel'; order: number }

const reason = fc.option(fc.constantFrom('recipient unreachable', 'address not found', 'refused', 'courier fell ill'), { nil: null, freq: 3 })
const courier = fc.option(
  fc.record({ name: fc.constantFrom('Musa Bello', 'Amaka Obi'), phone: fc.constantFrom('+2348090000000', '+2348091111111'), vehicle_plate: fc.option(fc.constantFrom('LSR-123-XY', 'KJA-456-AB'), { nil: null }) }),
  { nil: null, freq: 5 },
// fc.record builds objects without a prototype; the database hands back plain ones.
).map((value) => (value === null ? null : { ...value }))
const orderIndex = fc.nat({ max: 2 })
const step: fc.Arbitrary<Step> = fc.oneof(
  // A move the table allows from wherever the model says the order is (so long walks happen)…
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('advance' as const), order: orderIndex, to: fc.constant('next' as const), pick: fc.nat(), reason, courier }) },
  // …and a move to any status at all, mostly illegal ones.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), order: orderIndex, to: fc.constantFrom(...STATUSES), pick: fc.constant(0), reason, courier }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('cancel' as const), order: orderIndex, by: fc.constantFrom('business' as const, 'operator' as const), reason }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), order: orderIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('foreign_cancel' as const), order: orderIndex }) },
)
const scenario = fc.record({
  window: fc.constantFrom(120, 0),
  feePercent: fc.constantFrom(25, 12.5, 33.33, 7.77, 0, 100),
  // One to three bike parcels, each to one of the card's zones: prices differ from order to order.
  parcels: fc.array(fc.record({ weight: fc.integer({ min: 1, max: 20 }), to: fc.constantFrom(ISLAND, LEKKI, IKEJA) }), { minLength: 1, maxLength: 3 }),
  steps: fc.array(step, { minLength: 1, maxLength: 8 }),
})
type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never

t.test('random order lifecycles keep the order, its events and the wallet in step with the DESIGN', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const stranger = await seedAccount(sql, { card: null, name: 'Stranger Ltd' })
  // The demo card with half a naira on every price, so fees land on half kobo and the rounding shows.
  const file = demoCardFile()
  const card = await importRateCard(sql, { ...file, name: 'Half naira card', options: file.options.map((option: any) => ({ ...option, prices: option.prices.map((price: any) => ({ ...price, price: price.price + 0.5 })) })) }, 'NGN')
  const START = 1_000_000
  let runs = 0
  let changes = 0
  const seenEvents = new Set<string>()

  const read = async (account: SeededAccount, orderId: string): Promise<Resource> => {
    const response = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${orderId}`, headers: bearer(account.apiKey) })
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }

  /** The `cancellation` block the model expects a read (or an event) to show right now. */
  const preview = (order: ModelOrder, window: number, feePercent: number) => {
    if (order.status === 'created') return { cancellable: true, fee: 0, free_until: null }
    if (order.status !== 'assigned') return { cancellable: false, fee: null, free_until: null }
    return { cancellable: true, fee: order.expired ? feeOf(order.price, feePercent) / 100 : 0, free_until: new Date(order.assignedAt! + window * 1000).toISOString() }
  }

  const property = fc.asyncProperty(scenario, async ({ window, feePercent, parcels, steps }) => {
    runs++
    await changePlatformRates(sql, { cancelFreeWindowS: window, cancellationFeePercent: feePercent })
    const account = await seedAccount(sql, { card: null, balance: START, name: `Run ${runs}` })
    await setBusinessRateCard(sql, account.businessId, card.rate_card_id)
    const scope = { businessId: account.businessId, livemode: true }

    const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: parcels.map(({ weight, to }) => shipment({ weight, dropoff_latitude: to.lat, dropoff_longitude: to.lng })) })
    assert.equal(placed.statusCode, 201, placed.body)
    const charged = kobo(placed.json().charged_total)
    const orders: ModelOrder[] = []
    for (const { order_id: id, price } of placed.json().orders as { order_id: string; price: number }[]) {
      const first = await read(account, id)
      const order: ModelOrder = {
        id, price: kobo(price), status: 'created', version: 1, courier: null, history: [{ status: 'created' }], events: ['order.created'],
        refunded: 0, assignedAt: null, expired: false, reads: new Map([[1, first]]), previews: new Map(),
      }
      order.previews.set(1, preview(order, window, feePercent))
      orders.push(order)
    }

    for (const [n, next] of steps.entries()) {
      const order = orders[next.order % orders.length]
      const where = `step ${n} (${JSON.stringify(next)}) on ${order.id} in ${order.status}`

      if (next.kind === 'expire') {
        // The window ran out an hour ago: only meaningful while assigned.
        if (order.status === 'assigned') {
          await sql`update orders set assigned_at = assigned_at - interval '1 hour' where id = ${order.id}`
          order.assignedAt! -= 3_600_000
          order.expired = true
        }
      } else if (next.kind === 'foreign_cancel') {
        // Another business cannot reach the order: it is not found, and nothing moves.
        const outcome = await changeOrder(sql, { orderId: order.id, scope: { businessId: stranger.businessId, livemode: true } }, { kind: 'cancel', by: 'business', reason: null })
        assert.deepEqual(outcome, { kind: 'not_found', orderId: order.id }, where)
      } else {
        // What the model expects, decided from the table before the change is made.
        let change: OrderChange
        let expected: { kind: 'changed'; row: (typeof TABLE)[number]; refund: number } | { kind: 'unchanged' } | { kind: 'refused'; message: string } | { kind: 'invalid'; mentions: string }
        if (next.kind === 'advance') {
          const targets = TABLE.filter((row) => row.from === order.status && row.by.includes('dispatch')).map((row) => row.to)
          const to = next.to === 'next' ? (targets.length > 0 ? targets[next.pick % targets.length] : STATUSES[next.pick % STATUSES.length]) : next.to
          change = { kind: 'advance', to, courier: next.courier, reason: next.reason }
          const row = rowFor(order.status, to, 'dispatch')
          if (!row) expected = { kind: 'refused', message: `cannot move ${order.id} from ${order.status} to ${to}` }
          else if (row.reason && next.reason === null) expected = { kind: 'invalid', mentions: 'reason' }
          else if (to === 'assigned' && next.courier === null) expected = { kind: 'invalid', mentions: 'courier' }
          else expected = { kind: 'changed', row, refund: 0 }
        } else {
          change = { kind: 'cancel', by: next.by, reason: next.reason }
          const row = rowFor(order.status, 'cancelled', next.by)
          if (order.status === 'cancelled') expected = { kind: 'unchanged' }
          else if (!row) expected = { kind: 'refused', message: `${order.id} can no longer be cancelled: ${TOO_LATE[order.status]}` }
          else {
            // Business: free while created and inside the window; the operator always cancels free.
            const fee = next.by === 'business' && order.status === 'assigned' && order.expired ? feeOf(order.price, feePercent) : 0
            expected = { kind: 'changed', row, refund: order.price - fee }
          }
        }

        const outcome: OrderChangeOutcome = await changeOrder(sql, { orderId: order.id, scope: next.kind === 'cancel' && next.by === 'business' ? scope : null }, change)
        assert.equal(outcome.kind, expected.kind, `${where}: ${JSON.stringify(outcome)}`)
        if (expected.kind === 'refused' && outcome.kind === 'refused') assert.equal(outcome.message, expected.message, where)
        if (expected.kind === 'invalid' && outcome.kind === 'invalid') {
          assert.ok(outcome.message.includes(order.id) && outcome.message.includes(expected.mentions), `${where}: ${outcome.message}`)
        }
        if (expected.kind === 'unchanged' && outcome.kind === 'unchanged') {
          assert.deepEqual(withoutCancellation(outcome.order), withoutCancellation(order.reads.get(order.version)!), `${where}: a second cancel answers the order as it is`)
        }
        if (expected.kind === 'changed' && outcome.kind === 'changed') {
          changes++
          const { row } = expected
          order.status = row.to
          order.version++
          order.events.push(row.event)
          order.history.push(next.reason === null ? { status: row.to } : { status: row.to, reason: next.reason })
          const at = Date.parse((outcome.order.history as { at: string }[]).at(-1)!.at)
          if (row.to === 'assigned') {
            order.courier = next.kind === 'advance' ? next.courier : null
            order.assignedAt = at
            // A window of 0 s is over the moment it opens.
            order.expired = window === 0
          }
          if (row.to === 'created') { order.courier = null; order.assignedAt = null; order.expired = false }
          if (row.to === 'cancelled') { order.courier = undefined; order.refunded = expected.refund }
          const now = await read(account, order.id)
          assert.deepEqual(withoutCancellation(outcome.order), withoutCancellation(now), `${where}: the change answers the order as read`)
          order.reads.set(order.version, now)
          order.previews.set(order.version, preview(order, window, feePercent))
        }
      }

      // Every order of the run, as read now, against the model.
      for (const model of orders) {
        const shown = await read(account, model.id)
        const label = `${where}; ${model.id}`
        assert.equal(shown.status, model.status, label)
        assert.equal(shown.version, model.version, label)
        assert.equal(kobo(shown.price), model.price, label)
        assert.equal(kobo(shown.refunded_amount), model.refunded, `${label}: refunded_amount`)
        if (model.courier !== undefined) assert.deepEqual(shown.courier, model.courier && { id: null, ...model.courier, vehicle_type: null, location: null }, `${label}: courier (free text: no id, vehicle or position)`)
        assert.deepEqual(shown.history.map((entry: { status: string; reason?: string }) => (entry.reason === undefined ? { status: entry.status } : { status: entry.status, reason: entry.reason })), model.history, `${label}: history`)
        assert.deepEqual(shown.cancellation, preview(model, window, feePercent), `${label}: cancellation preview`)
      }

      // The business's events: gapless from 1, one per version of each order, each the order as read at that version.
      const events = await sql`select id, sequence, type, order_id, order_version, data from events where business_id = ${account.businessId} and livemode order by sequence`
      assert.deepEqual(events.map((event) => Number(event.sequence)), events.map((_, i) => i + 1), `${where}: sequences 1..N without gaps`)
      assert.equal(events.length, orders.reduce((sum, model) => sum + model.events.length, 0), `${where}: one event per change`)
      for (const model of orders) {
        const own = events.filter((event) => event.orderId === model.id)
        assert.deepEqual(own.map((event) => event.type), model.events, `${where}; ${model.id}: event types`)
        own.forEach((event, i) => {
          const version = i + 1
          assert.equal(event.orderVersion, version, `${model.id}: event ${event.sequence} is version ${version}`)
          assert.deepEqual(withoutCancellation(event.data.order), withoutCancellation(model.reads.get(version)!), `${where}; ${model.id}: event ${event.sequence} is the order as read at version ${version}`)
          // 13.6: the block an event carries was computed when it was written.
          assert.deepEqual(event.data.order.cancellation, model.previews.get(version), `${model.id}: event ${event.sequence}'s cancellation at its time`)
          seenEvents.add(event.type)
        })
      }

      // The wallet: balance = credits − debits + refunds, the column agrees, and each refund is its order's.
      const ledger = await sql`select kind, amount, order_id, balance_after from ledger_entries where business_id = ${account.businessId} order by id`
      const sum = (kind: string) => ledger.filter((entry) => entry.kind === kind).reduce((total, entry) => total + Number(entry.amount), 0)
      const [{ balance }] = await sql`select balance from wallets where business_id = ${account.businessId}`
      const refunds = orders.reduce((total, model) => total + model.refunded, 0)
      assert.equal(sum('credit'), START * 100, where)
      assert.equal(sum('debit'), charged, where)
      assert.equal(sum('refund'), refunds, `${where}: refunds`)
      assert.equal(balance, sum('credit') - sum('debit') + sum('refund'), `${where}: balance = credits − debits + refunds`)
      assert.equal(balance, START * 100 - charged + refunds, `${where}: the balance the model expects`)
      let running = 0
      for (const entry of ledger) {
        running += entry.kind === 'debit' ? -entry.amount : entry.amount
        assert.equal(entry.balanceAfter, running, `${where}: balance_after replays`)
      }
      for (const model of orders) {
        const entries = ledger.filter((entry) => entry.kind === 'refund' && entry.orderId === model.id).map((entry) => Number(entry.amount))
        // A refund of nothing (a 100 % fee) writes no entry: the ledger holds positive amounts only.
        assert.deepEqual(entries, model.refunded > 0 ? [model.refunded] : [], `${where}; ${model.id}: its refund entry`)
      }
    }
  })

  // Walks that reach every status, besides the random ones: unassign and reassign, fail and
  // return, a business cancel after the window (with a fee) and an operator cancel after it (free).
  const musa: Courier = { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: 'LSR-123-XY' }
  const walk = (order: number, to: OrderStatus, extra: { reason?: string; courier?: Courier } = {}): Step =>
    ({ kind: 'advance', order, to, pick: 0, reason: extra.reason ?? null, courier: extra.courier ?? null })
  const examples: [Scenario][] = [
    [{ window: 120, feePercent: 25, parcels: [{ weight: 3, to: IKEJA }, { weight: 7, to: LEKKI }], steps: [
      walk(0, 'assigned', { courier: musa }), walk(0, 'created', { reason: 'courier fell ill' }), walk(0, 'assigned', { courier: musa }),
      walk(0, 'picked_up'), walk(0, 'failed', { reason: 'refused' }), walk(0, 'returned'),
      walk(1, 'assigned', { courier: musa }), { kind: 'expire', order: 1 }, { kind: 'cancel', order: 1, by: 'business', reason: null },
    ] }],
    [{ window: 120, feePercent: 12.5, parcels: [{ weight: 2, to: ISLAND }, { weight: 4, to: IKEJA }, { weight: 15, to: IKEJA }], steps: [
      walk(0, 'assigned', { courier: musa }), walk(0, 'picked_up'), walk(0, 'delivered'), walk(0, 'picked_up'),
      walk(1, 'assigned', { courier: musa }), { kind: 'expire', order: 1 }, { kind: 'cancel', order: 1, by: 'operator', reason: 'duplicate' },
      { kind: 'cancel', order: 2, by: 'business', reason: null }, { kind: 'cancel', order: 2, by: 'operator', reason: null },
    ] }],
  ]
  await fc.assert(property, { numRuns: 40, examples })
  t.equal(runs, 40, `${runs} runs`)
  t.ok(changes >= 40, `${changes} changes made`)
  // A walk that never reached some event type would test less than it claims.
  t.same([...seenEvents].sort(), ['order.assigned', 'order.cancelled', 'order.created', 'order.delivered', 'order.failed', 'order.picked_up', 'order.returned', 'order.unassigned'], 'every event type was written at least once')
})

t.test('changes racing on one order are made one after the other', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const account = await seedAccount(sql, { balance: 1_000_000 })
  const scope = { businessId: account.businessId, livemode: true }
  const musa: Courier = { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: null }
  const racers: Record<string, OrderChange> = {
    businessCancel: { kind: 'cancel', by: 'business', reason: null },
    operatorCancel: { kind: 'cancel', by: 'operator', reason: 'duplicate' },
    pickUp: { kind: 'advance', to: 'picked_up', courier: null, reason: null },
    unassign: { kind: 'advance', to: 'created', courier: null, reason: 'courier fell ill' },
    reassign: { kind: 'advance', to: 'assigned', courier: musa, reason: null },
  }
  let rounds = 0

  await fc.assert(fc.asyncProperty(fc.constantFrom(0, 120), fc.array(fc.constantFrom(...Object.keys(racers)), { minLength: 2, maxLength: 4 }), async (window, names) => {
    rounds++
    await changePlatformRates(sql, { cancelFreeWindowS: window, cancellationFeePercent: 25 })
    const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: [shipment()] })
    assert.equal(placed.statusCode, 201, placed.body)
    const orderId: string = placed.json().orders[0].order_id
    const price = kobo(placed.json().orders[0].price)
    const assigned = await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to: 'assigned', courier: musa, reason: null })
    assert.equal(assigned.kind, 'changed')

    // All at once: each waits for the order's row lock, so they land one after the other.
    const outcomes = await Promise.all(names.map((name) => changeOrder(sql, { orderId, scope: racers[name].kind === 'cancel' && (racers[name] as { by: string }).by === 'business' ? scope : null }, racers[name])))
    const made = outcomes.flatMap((outcome, i) => (outcome.kind === 'changed' ? [{ name: names[i], order: outcome.order }] : [])).sort((a, b) => Number(a.order.version) - Number(b.order.version))
    const changed = made.map(({ order }) => order)
    assert.deepEqual(changed.map((order) => order.version), changed.map((_, i) => i + 3), `versions 3.. without gaps or repeats: ${JSON.stringify(outcomes)}`)
    // Replayed in version order, every change is a move the table allows from the status before
    // it, and a cancel refunds what the status before it and its actor say.
    let status: OrderStatus = 'assigned'
    for (const { name, order } of made) {
      const change = racers[name]
      const actor: Actor = change.kind === 'cancel' ? change.by : 'dispatch'
      assert.ok(rowFor(status, order.status as OrderStatus, actor), `${name}: ${status} → ${String(order.status)} is in the table`)
      if (change.kind === 'cancel') {
        // After a race that unassigned and reassigned, the window restarted with the new assignment.
        const fee: number = change.by === 'business' && status === 'assigned' && window === 0 ? feeOf(price, 25) : 0
        assert.equal(kobo(Number(order.refunded_amount)), price - fee, `${name} from ${status} refunds the price less the fee`)
      }
      status = order.status as OrderStatus
    }
    for (const outcome of outcomes) assert.ok(outcome.kind === 'changed' || outcome.kind === 'refused' || outcome.kind === 'unchanged', JSON.stringify(outcome))

    const events = await sql`select type, order_version from events where order_id = ${orderId} order by sequence`
    assert.deepEqual(events.map((event) => event.orderVersion), events.map((_, i) => i + 1), 'one event per version')
    assert.equal(events.length, 2 + changed.length)
    const sequences = await sql`select sequence from events where business_id = ${account.businessId} order by sequence`
    assert.deepEqual(sequences.map((row) => Number(row.sequence)), sequences.map((_, i) => i + 1), 'the business\'s sequences stay gapless')

    const final = changed.at(-1) ?? (assigned.kind === 'changed' ? assigned.order : null)!
    const refunds = await sql`select amount from ledger_entries where kind = 'refund' and order_id = ${orderId}`
    assert.ok(refunds.length <= 1, 'refunded once at most')
    assert.equal(refunds.reduce((sum, row) => sum + Number(row.amount), 0), kobo(Number(final.refunded_amount)), 'the refund entry is the order\'s refunded_amount')
    if (final.status === 'cancelled') assert.ok(refunds.length === 1 && Number(refunds[0].amount) <= price, 'a cancel refunds at most the price')
    const [wallet] = await sql`select w.balance, coalesce(sum(case when l.kind = 'debit' then -l.amount else l.amount end), 0)::bigint as ledger
      from wallets w join ledger_entries l on l.business_id = w.business_id where w.business_id = ${account.businessId} group by w.balance`
    assert.equal(wallet.balance, wallet.ledger, 'balance = credits − debits + refunds')
  }), { numRuns: 15 })
  t.equal(rounds, 15, `${rounds} races`)
})
