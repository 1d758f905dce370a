import t, { type Test } from 'tap'
import type { Courier, OrderStatus } from '../../../shared/courier.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { orderSchema } from '../../../shared/schemas/order.js'
import { seedAccount } from '../../helpers/accounts.js'
import { PLACE } from '../../helpers/gateway.js'
import { runOperatorCli, type CliRun } from '../../helpers/operator-cli.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// The operator's dispatch and cancel (DESIGN section 8): `order:advance` and `order:cancel`,
// run as the built CLI against orders placed through the real placement path. Every move is
// checked three ways: what the CLI printed, the order as the API reads it, and the one event
// the move wrote; refusals are one line on stderr, exit 1, and change nothing. Every CLI run
// costs a process start, so the moves are walked once per path and the refusals share orders
// parked in each status.

type Order = Record<string, any>

const MUSA = ['--courier-name', 'Musa Bello', '--courier-phone', '+2348090000000', '--vehicle-plate', 'LSR-123-XY']
const AMAKA = ['--courier-name', 'Amaka Obi', '--courier-phone', '+2348091111111']

/** Kobo of a major-unit amount as the API shows it. */
const kobo = (major: number) => Math.round(major * 100)
/** The DESIGN's fee: `percent` of the price, rounded half away from zero to the kobo (prices are positive). */
const feeKobo = (priceKobo: number, percent: number) => Math.floor((priceKobo * Math.round(percent * 100) + 5000) / 10000)
const withoutCancellation = ({ cancellation: _ignored, ...rest }: Order) => rest

t.test('operator CLI: order:advance and order:cancel', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const account = await seedAccount(sql, { balance: 100000 })

  const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: Array.from({ length: 8 }, (_, i) => shipment({ recipient_name: `Recipient ${i}`, weight: 1 + i })) })
  t.equal(placed.statusCode, 201, placed.statusCode === 201 ? 'eight orders placed' : placed.body)
  const orderIds: string[] = placed.json().orders.map((order: { order_id: string }) => order.order_id)
  const [a, b, c, d, e, f, g, h] = orderIds
  const chargedKobo = kobo(placed.json().charged_total)
  const cli = (args: string[]) => runOperatorCli(db, args)

  const read = async (orderId: string): Promise<Order> => {
    const response = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${orderId}`, headers: bearer(account.apiKey) })
    if (response.statusCode !== 200) t.fail(`GET ${orderId} answers ${response.statusCode}: ${response.body}`)
    return response.json()
  }
  const balance = async (): Promise<number> => (await sql`select balance from wallets where business_id = ${account.businessId}`)[0].balance
  const events = async () => sql`select id, sequence, type, order_id, order_version, data from events where business_id = ${account.businessId} order by sequence`
  const refundsOf = async (orderId: string) => sql`select amount, balance_after from ledger_entries where kind = 'refund' and order_id = ${orderId}`
  /** Everything a refused command must leave as it was. */
  const snapshot = async () => (await sql`select
      (select count(*)::int from events) as events, (select count(*)::int from ledger_entries) as ledger,
      (select coalesce(sum(balance), 0)::bigint from wallets) as balances,
      (select string_agg(id || ':' || status || ':' || version, ',' order by id) from orders) as orders`)[0]

  t.test('placement wrote one order.created event per order, numbered from 1', async (t) => {
    const rows = await events()
    t.same(rows.map((row) => [row.sequence, row.type, row.orderId, row.orderVersion]), orderIds.map((id, i) => [i + 1, 'order.created', id, 1]))
  })

  /**
   * Runs a move that must succeed and checks it: one JSON line on stdout that is the order
   * resource, one version more, the status asked for, exactly one new event of `type` with the
   * next sequence and the printed order as its data, and the API's read agreeing.
   */
  const moves = async (t: Test, args: string[], expected: { type: string; status: string }): Promise<Order> => {
    const orderId = args[args.indexOf('--order') + 1]
    const before = await read(orderId)
    const eventsBefore = await events()
    const run: CliRun = await cli(args)
    t.equal(run.code, 0, `${args.join(' ')} exits 0: ${run.stderr}`)
    t.equal(run.stderr, '', 'nothing on stderr')
    t.equal(run.stdout.split('\n').length, 2, 'one line on stdout')
    const printed: Order = run.json
    const parsed = orderSchema.strict().safeParse(printed)
    t.ok(parsed.success, parsed.success ? 'prints the order resource, no field more or less' : JSON.stringify(parsed.error.issues))
    t.equal(printed.order_id, orderId)
    t.equal(printed.status, expected.status)
    t.equal(printed.version, before.version + 1, 'version rises by one')
    t.same(printed.history.map((step: { status: string }) => step.status), [...before.history.map((step: { status: string }) => step.status), expected.status], 'the move is added to the history')
    t.same(withoutCancellation(await read(orderId)), withoutCancellation(printed), 'the API reads what the CLI printed')

    const eventsAfter = await events()
    t.equal(eventsAfter.length, eventsBefore.length + 1, 'one event written')
    const event = eventsAfter.at(-1)!
    t.equal(event.sequence, eventsBefore.length + 1, 'with the next sequence of the business')
    t.equal(event.type, expected.type)
    t.equal(event.orderId, orderId)
    t.equal(event.orderVersion, printed.version)
    t.strictSame(event.data, { order: printed }, 'its data is the order after the change')
    return printed
  }

  /** Runs a move retried on an order already where it goes: exit 0, the order as it stands, a note on stderr, no event. */
  const stays = async (t: Test, args: string[]): Promise<void> => {
    const orderId = args[args.indexOf('--order') + 1]
    const before = await read(orderId)
    const eventsBefore = (await events()).length
    const run = await cli(args)
    t.equal(run.code, 0, `${args.join(' ')} is a retry: exits 0`)
    t.equal(run.stderr, `note: ${orderId} is already ${before.status}; nothing changed\n`, 'and says the order is already there')
    t.same(withoutCancellation(run.json), withoutCancellation(before), 'it prints the order as it stands')
    t.equal((await read(orderId)).version, before.version, 'the order did not move')
    t.equal((await events()).length, eventsBefore, 'no event')
  }

  t.test('assigned → picked_up → delivered', async (t) => {
    const assigned = await moves(t, ['order:advance', '--order', a, '--to', 'assigned', ...MUSA], { type: 'order.assigned', status: 'assigned' })
    t.same(assigned.courier, { id: null, name: 'Musa Bello', phone: '+2348090000000', vehicle_type: null, vehicle_plate: 'LSR-123-XY', location: null }, 'a free-text courier: no id, vehicle or position')
    const assignedAt = Date.parse(assigned.history.at(-1).at)
    t.same(assigned.cancellation, { cancellable: true, fee: 0, free_until: new Date(assignedAt + 120_000).toISOString() }, 'free for 120 s after the assignment')

    const pickedUp = await moves(t, ['order:advance', '--order', a, '--to', 'picked_up'], { type: 'order.picked_up', status: 'picked_up' })
    t.same(pickedUp.courier, assigned.courier, 'the courier stays')
    t.same(pickedUp.cancellation, { cancellable: false, fee: null, free_until: null })

    const delivered = await moves(t, ['order:advance', '--order', a, '--to', 'delivered'], { type: 'order.delivered', status: 'delivered' })
    await stays(t, ['order:advance', '--order', a, '--to', 'delivered'])
    t.same(delivered.courier, assigned.courier)
    t.equal(delivered.refunded_amount, 0)
    t.same(await refundsOf(a), [], 'a delivered order is never refunded')
  })

  t.test('assigned, unassigned with a reason, reassigned, picked up, failed with a reason, returned: no money moves', async (t) => {
    const walletBefore = await balance()
    const first = await moves(t, ['order:advance', '--order', b, '--to', 'assigned', ...AMAKA], { type: 'order.assigned', status: 'assigned' })
    t.same(first.courier, { id: null, name: 'Amaka Obi', phone: '+2348091111111', vehicle_type: null, vehicle_plate: null, location: null }, 'the plate is optional')
    await stays(t, ['order:advance', '--order', b, '--to', 'assigned', ...AMAKA])
    // The phone is read by the platform's one rule (shared/phone.ts): another spelling of it is the same courier.
    await stays(t, ['order:advance', '--order', b, '--to', 'assigned', '--courier-name', 'Amaka Obi', '--courier-phone', '0809 111 1111'])
    // Another courier is no retry: unassign first.
    const other = await cli(['order:advance', '--order', b, '--to', 'assigned', ...MUSA])
    t.equal(other.code, 1, 'assigning an assigned order to another courier exits 1')
    t.equal(other.stderr, `cannot move ${b} from assigned to assigned\n`)

    const unassigned = await moves(t, ['order:advance', '--order', b, '--to', 'created', '--reason', 'bike broke down'], { type: 'order.unassigned', status: 'created' })
    t.equal(unassigned.courier, null, 'no courier after unassigning')
    t.equal(unassigned.history.at(-1).reason, 'bike broke down', 'the reason is kept in the history')
    t.same(unassigned.cancellation, { cancellable: true, fee: 0, free_until: null }, 'free_until is null until assigned again')

    const second = await moves(t, ['order:advance', '--order', b, '--to', 'assigned', ...MUSA], { type: 'order.assigned', status: 'assigned' })
    t.equal(second.courier.name, 'Musa Bello')
    t.equal(second.cancellation.free_until, new Date(Date.parse(second.history.at(-1).at) + 120_000).toISOString(), 'the window runs from the latest assignment')

    await moves(t, ['order:advance', '--order', b, '--to', 'picked_up'], { type: 'order.picked_up', status: 'picked_up' })
    const failed = await moves(t, ['order:advance', '--order', b, '--to', 'failed', '--reason', 'recipient unreachable'], { type: 'order.failed', status: 'failed' })
    t.equal(failed.history.at(-1).reason, 'recipient unreachable')

    const returned = await moves(t, ['order:advance', '--order', b, '--to', 'returned'], { type: 'order.returned', status: 'returned' })
    t.equal(returned.refunded_amount, 0)
    t.equal(await balance(), walletBefore, 'failed and returned move no money')
    t.same(await refundsOf(b), [])
  })

  t.test('operator cancel of a created order: a full refund in the same change; a second cancel changes nothing', async (t) => {
    const walletBefore = await balance()
    const before = await read(c)
    const cancelled = await moves(t, ['order:cancel', '--order', c, '--reason', 'customer called'], { type: 'order.cancelled', status: 'cancelled' })
    t.equal(cancelled.refunded_amount, before.price, 'the whole price is refunded')
    t.same(cancelled.cancellation, { cancellable: false, fee: null, free_until: null })
    t.equal(cancelled.history.at(-1).reason, 'customer called')
    t.equal(await balance(), walletBefore + kobo(before.price))
    t.same(await refundsOf(c), [{ amount: kobo(before.price), balanceAfter: walletBefore + kobo(before.price) }], 'one refund entry with the order id')

    const eventsBefore = (await events()).length
    const again = await cli(['order:cancel', '--order', c])
    t.equal(again.code, 0, `a second cancel exits 0: ${again.stderr}`)
    t.equal(again.stderr, `note: ${c} is already cancelled; nothing changed\n`)
    t.same(withoutCancellation(again.json), withoutCancellation(cancelled), 'and prints the cancelled order as it is')
    t.equal((await events()).length, eventsBefore, 'no event')
    t.equal(await balance(), walletBefore + kobo(before.price), 'no money')
    t.equal((await refundsOf(c)).length, 1)
  })

  t.test('operator cancel of an assigned order after the free window is still free', async (t) => {
    await moves(t, ['order:advance', '--order', d, '--to', 'assigned', ...MUSA], { type: 'order.assigned', status: 'assigned' })
    // The window (120 s by default) ran out an hour ago: a business would now pay the fee.
    await sql`update orders set assigned_at = assigned_at - interval '1 hour' where id = ${d}`
    const late = await read(d)
    t.same(late.cancellation, { cancellable: true, fee: feeKobo(kobo(late.price), 25) / 100, free_until: new Date(Date.parse(late.history.at(-1).at) - 3_600_000 + 120_000).toISOString() }, 'the preview shows the business fee')
    const walletBefore = await balance()
    const cancelled = await moves(t, ['order:cancel', '--order', d], { type: 'order.cancelled', status: 'cancelled' })
    t.equal(cancelled.refunded_amount, late.price, 'the operator cancels free: a full refund')
    t.equal(await balance(), walletBefore + kobo(late.price))
    t.same(await refundsOf(d), [{ amount: kobo(late.price), balanceAfter: walletBefore + kobo(late.price) }])
  })

  t.test('refusals: one clear line on stderr, exit 1, nothing changed', async (t) => {
    // Orders waiting in the other states, moved in-process with the function the CLI calls (setup only).
    const dispatch = async (orderId: string, to: OrderStatus, extra: { courier?: Courier; reason?: string } = {}) => {
      const outcome = await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to, courier: extra.courier ?? null, reason: extra.reason ?? null })
      t.equal(outcome.kind, 'changed', `setup: ${orderId} to ${to}`)
    }
    const courier = { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: null }
    for (const orderId of [f, g, h]) await dispatch(orderId, 'assigned', { courier })
    for (const orderId of [g, h]) await dispatch(orderId, 'picked_up')
    await dispatch(h, 'failed', { reason: 'address not found' })

    const cases: [string[], string | RegExp][] = [
      // The DESIGN's own example, and the other terminal states.
      [['order:advance', '--order', a, '--to', 'picked_up'], `cannot move ${a} from delivered to picked_up`],
      [['order:cancel', '--order', a, '--reason', 'too late'], `${a} can no longer be cancelled: it is delivered`],
      [['order:advance', '--order', b, '--to', 'created', '--reason', 'again'], `cannot move ${b} from returned to created`],
      [['order:cancel', '--order', b], `${b} can no longer be cancelled: it was returned`],
      [['order:advance', '--order', c, '--to', 'assigned', ...MUSA], `cannot move ${c} from cancelled to assigned`],
      // created
      [['order:advance', '--order', e, '--to', 'picked_up'], `cannot move ${e} from created to picked_up`],
      // An illegal move is refused as such, whether or not it would need a reason.
      [['order:advance', '--order', e, '--to', 'failed'], `cannot move ${e} from created to failed`],
      // Dispatch does not cancel: that is order:cancel.
      [['order:advance', '--order', e, '--to', 'cancelled'], `order:advance does not cancel; cancel with order:cancel --order ${e} [--reason …]`],
      // assigned
      [['order:advance', '--order', f, '--to', 'created'], `a reason is required to move ${f} to created`],
      // picked_up
      [['order:advance', '--order', g, '--to', 'failed'], `a reason is required to move ${g} to failed`],
      [['order:cancel', '--order', g], `${g} can no longer be cancelled: it was picked up`],
      // failed
      [['order:cancel', '--order', h], `${h} can no longer be cancelled: it failed`],
      // Flags.
      [['order:advance', '--order', e, '--to', 'assigned', '--courier-name', 'Musa Bello'], '--courier-phone is required'],
      [['order:advance', '--order', e, '--to', 'assigned', '--courier-name', 'Musa Bello', '--courier-phone', 'abc'], /^--courier-phone must be a phone number: .*, got 'abc'$/],
      [['order:advance', '--order', e, '--to', 'assigned', '--courier-name', 'Musa Bello', '--courier-phone', '123'], /^--courier-phone must be a phone number: .*, got '123'$/],
      [['order:advance', '--order', e, '--to', 'picked_up', '--courier-name', 'Musa Bello'], /--courier-name .*only .*assigned/],
      [['order:advance', '--order', e, '--to', 'flying'], /^--to must be one of created, assigned, picked_up, delivered, failed, returned, got 'flying'$/],
      [['order:advance', '--to', 'picked_up'], '--order is required'],
      [['order:cancel'], '--order is required'],
      [['order:advance', '--order', 'nope', '--to', 'picked_up'], /--order must be an order id/],
      [['order:advance', '--order', e, '--to', 'picked_up', '--colour', 'red'], /unknown option '--colour'/i],
      [['order:advance', '--order', 'ORD-0000000000', '--to', 'assigned', ...MUSA], /ORD-0000000000 (does not exist|was not found)/],
      [['order:cancel', '--order', 'ORD-0000000000'], /ORD-0000000000 (does not exist|was not found)/],
    ]
    // Independent refusals, two at a time to keep the file quick; each is checked on its own output.
    const before = await snapshot()
    const runs: CliRun[] = []
    let next = 0
    const lane = async () => {
      for (let i = next++; i < cases.length; i = next++) runs[i] = await cli(cases[i][0])
    }
    await Promise.all([lane(), lane()])
    cases.forEach(([args, message], i) => {
      const run = runs[i]
      t.equal(run.code, 1, `${args.join(' ')} exits 1`)
      t.equal(run.stdout, '', 'nothing on stdout')
      t.equal(run.stderr.split('\n').length, 2, `one line on stderr: ${run.stderr}`)
      if (typeof message === 'string') t.equal(run.stderr, `${message}\n`)
      else t.match(run.stderr.trim(), message)
    })
    t.same(await snapshot(), before, 'nothing changed: no status, version, event, ledger entry or balance')
    t.equal((await read(e)).version, 1, 'the created order never moved')
  })

  t.test('the business\'s events and ledger in the end', async (t) => {
    const rows = await events()
    t.same(rows.map((row) => row.sequence), rows.map((_, i) => i + 1), 'sequences from 1 without gaps')
    const typesOf = (orderId: string) => rows.filter((row) => row.orderId === orderId).map((row) => row.type)
    t.same(typesOf(a), ['order.created', 'order.assigned', 'order.picked_up', 'order.delivered'])
    t.same(typesOf(b), ['order.created', 'order.assigned', 'order.unassigned', 'order.assigned', 'order.picked_up', 'order.failed', 'order.returned'])
    t.same(typesOf(c), ['order.created', 'order.cancelled'])
    t.same(typesOf(d), ['order.created', 'order.assigned', 'order.cancelled'])
    t.same(typesOf(e), ['order.created'])
    t.same(typesOf(h), ['order.created', 'order.assigned', 'order.picked_up', 'order.failed'])
    for (const orderId of orderIds) {
      const versions = rows.filter((row) => row.orderId === orderId).map((row) => row.orderVersion)
      t.same(versions, versions.map((_, i) => i + 1), `${orderId}: one event per version`)
    }

    const ledger = await sql`select kind, amount, order_id, balance_after from ledger_entries where business_id = ${account.businessId} order by id`
    t.same(ledger.map((row) => row.kind), ['credit', 'debit', 'refund', 'refund'])
    t.same(ledger.filter((row) => row.kind === 'refund').map((row) => row.orderId), [c, d])
    let running = 0
    for (const row of ledger) {
      running += row.kind === 'debit' ? -row.amount : row.amount
      t.equal(row.balanceAfter, running, `balance_after of the ${row.kind} replays`)
    }
    const refunded = kobo((await read(c)).price) + kobo((await read(d)).price)
    t.equal(await balance(), 100000 * 100 - chargedKobo + refunded, 'balance = credit − debit + refunds')
    t.equal(running, await balance())
  })
})
