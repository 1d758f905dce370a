import { createHash, randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { OrderStatus } from '../../../shared/courier.js'
import { insertCourier } from '../../../shared/db/couriers.js'
import { closeOffer, insertOffer } from '../../../shared/db/offers.js'
import { newUuid } from '../../../shared/ids.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { erasePersonalDataOlderThan, phoneFingerprint } from '../../../shared/orders/personal-data.js'
import { seedAccount } from '../../helpers/accounts.js'
import { everyRowAsText } from '../../helpers/db.js'
import { PLACE } from '../../helpers/gateway.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { childEnv, projectRoot } from '../../helpers/processes.js'
import { IKEJA, ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { usePhotoStore } from '../../helpers/photos.js'

/*
 * Erasure covers everything personal: after it, no row of any table (placements, orders,
 * events, everything else) holds the person's name, numbers, e-mail, addresses, exact
 * coordinates, item description, courier details or reasons.
 */

const AUDIT_KEY = 'the erasure audit key of this test file, 32+'

t.test('personal data erasure', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const account = await seedAccount(sql, { balance: 1_000_000 })

  /** A person of their own: every personal value carries a tag found nowhere else. */
  const person = () => {
    const tag = `Tag${randomBytes(5).toString('hex')}`
    const digits = String(7_000_000_000 + Math.floor(Math.random() * 999_999_999))
    const offset = (Math.floor(Math.random() * 9000) + 1000) / 1e7
    const fields = {
      recipient_name: `Zainab ${tag}`, recipient_phone: `+234${digits}`, recipient_email: `${tag.toLowerCase()}@example.com`,
      alternate_phone: `+234${Number(digits) + 1}`, sender_name: `Sender ${tag}`, sender_phone: `+234${Number(digits) + 2}`,
      pickup_address: `12 ${tag} Street, Victoria Island`, dropoff_address: `34 ${tag} Avenue, Ikeja`, item_description: `${tag} heirloom ring`,
      pickup_latitude: ISLAND.lat + offset, pickup_longitude: ISLAND.lng + offset, dropoff_latitude: IKEJA.lat + offset, dropoff_longitude: IKEJA.lng + offset,
      proof: { pin: true },
    }
    const courier = { name: `Musa ${tag}`, phone: `+234${Number(digits) + 3}`, vehicle_plate: `PL-${tag}` }
    const traces = [tag, digits, String(Number(digits) + 1), String(Number(digits) + 2), String(Number(digits) + 3), String(fields.pickup_latitude), String(fields.dropoff_longitude)]
    return { tag, digits, fields, courier, traces }
  }
  const place = async (t: Test, fields: Record<string, unknown>) => {
    const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: [shipment(fields)] })
    t.equal(placed.statusCode, 201, placed.body)
    return placed.json() as { placement_id: string; orders: { order_id: string }[] }
  }
  /** Assigned to the courier, picked up, then failed with a reason naming the person. */
  const failWithReason = async (t: Test, orderId: string, who: ReturnType<typeof person>) => {
    for (const [to, reason] of [['assigned', null], ['picked_up', null], ['failed', `${who.tag} was not at home`]] as [OrderStatus, string | null][]) {
      const moved = await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? who.courier : null, reason })
      t.equal(moved.kind, 'changed', `${orderId} → ${to}`)
      // Where the courier was, as the location route keeps it while the order is held: the person's pickup.
      if (to === 'picked_up') await sql`insert into order_trail_points (order_id, at, latitude, longitude) values (${orderId}, now(), ${who.fields.pickup_latitude}, ${who.fields.pickup_longitude})`
    }
  }
  /** A registered courier declined the order, saying why in words that name the person; another courier took it. */
  const declinedThenAccepted = async (orderId: string, who: ReturnType<typeof person>) => {
    const rider = () => insertCourier(sql, { id: newUuid(), name: 'Registered Rider', phone: `+234${7_000_000_000 + Math.floor(Math.random() * 999_999_999)}`, vehicleType: 'bike', vehiclePlate: null, maxWeightKg: 10 })
    for (const [status, reason] of [['declined', `${who.tag} lives up four flights`], ['accepted', null]] as const) {
      const offer = await insertOffer(sql, { id: newUuid(), orderId, courierId: (await rider()).id, offerS: 30 })
      await closeOffer(sql, offer!.id, status, reason)
    }
  }
  const offersOf = async (orderId: string) => (await sql<{ status: string; reason: string | null }[]>`
    select status, reason from dispatch_offers where order_id = ${orderId} order by created_at`).map((row) => ({ ...row }))
  const traced = async (who: ReturnType<typeof person>) => {
    const dump = await everyRowAsText(sql)
    return who.traces.filter((trace) => dump.includes(trace))
  }

  t.test('the retention sweep leaves no trace of the person in any table', async (t) => {
    const who = person()
    const placed = await place(t, who.fields)
    await declinedThenAccepted(placed.orders[0]!.order_id, who)
    await failWithReason(t, placed.orders[0]!.order_id, who)
    // A second order of the person's, delivered: an order at rest.
    const delivered = await place(t, who.fields)
    await declinedThenAccepted(delivered.orders[0]!.order_id, who)
    for (const to of ['assigned', 'picked_up', 'delivered'] as OrderStatus[]) {
      t.equal((await changeOrder(sql, { orderId: delivered.orders[0]!.order_id, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? who.courier : null, reason: null })).kind, 'changed')
    }
    t.same(await traced(who), who.traces, 'before: every trace is stored')
    t.equal((await offersOf(delivered.orders[0]!.order_id)).length, 2)
    await sql`update placements set created_at = now() - interval '91 days' where id = any(${[placed.placement_id, delivered.placement_id]})`
    t.ok(await erasePersonalDataOlderThan(sql, usePhotoStore(t).store, 90) >= 2)
    t.same(await traced(who), [], 'after: none is left anywhere')
    t.same(await offersOf(placed.orders[0]!.order_id), [{ status: 'declined', reason: null }, { status: 'accepted', reason: null }],
      'an open order keeps its offers, which dispatch reads, without the decline\'s words')
    t.same(await offersOf(delivered.orders[0]!.order_id), [], 'an order at rest loses them')
    t.same([...(await sql`select delivery_pin from orders where id = ${placed.orders[0]!.order_id}`)].map((row) => row.deliveryPin), [null], 'nor the delivery PIN the recipient was given')
    const read = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${placed.orders[0]!.order_id}`, headers: bearer(account.apiKey) })
    t.equal(read.statusCode, 200, read.body)
    const order = read.json()
    t.match(order, { status: 'failed', recipient_name: null, item_description: null, pickup_latitude: null, courier: null, item_name: 'Phone case' }, 'the order reads erased; status, price and item name stay')
    t.notOk(order.history.some((step: { reason?: string }) => step.reason), 'no reason is left in the history')
  })

  t.test('erase --phone: one person erased on request, everywhere, whatever the age; others untouched; audited without the number', async (t) => {
    const who = person()
    const other = person()
    const mine = await place(t, who.fields)
    const otherStored = () => other.traces.filter((trace) => trace !== String(Number(other.digits) + 3))
    const theirs = await place(t, other.fields)
    // One placement with both: only this person's shipment goes.
    const shared = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: [shipment(who.fields), shipment(other.fields)] })
    t.equal(shared.statusCode, 201, shared.body)

    const stored = await traced(who)
    const refused = await runOperatorCli(db, ['erase', '--phone', who.fields.recipient_phone])
    t.equal(refused.code, 1, 'refused while an order of theirs is on its way')
    t.match(refused.stderr, `nothing was erased: `)
    t.match(refused.stderr, mine.orders[0]!.order_id)
    t.same(await traced(who), stored, 'nothing was erased')

    await failWithReason(t, mine.orders[0]!.order_id, who)
    await failWithReason(t, shared.json().orders[0].order_id, who)
    const run = await runOperatorCli(db, ['erase', '--phone', `0${who.digits}`], { ERASURE_AUDIT_KEY: AUDIT_KEY })
    t.equal(run.code, 0, run.stderr)
    t.same(run.json, { phone: phoneFingerprint(who.digits, AUDIT_KEY), erased_orders: [mine.orders[0]!.order_id, shared.json().orders[0].order_id].sort() })
    t.same(await traced(who), [], 'no trace of the person is left in any table')
    t.same(await traced(other), otherStored(), 'the other person, in the same placement too, keeps every field')
    t.ok(theirs.placement_id)
    const [audit] = await sql`select actor, action, subject, after from audit_log where action = 'person.erase'`
    t.match(audit, { action: 'person.erase', subject: `phone ${phoneFingerprint(who.digits, AUDIT_KEY)}` })
    t.notOk(JSON.stringify(audit).includes(who.digits), 'the audit row names no number')
    // Nor one that trying every number gives back: without the key, the number's hash is not it.
    const unkeyed = createHash('sha256').update(`phone:${who.digits}`).digest('hex')
    t.notOk(unkeyed.startsWith(audit!.subject.slice('phone '.length)), 'the name is keyed, not a plain hash of the number')
    t.not(phoneFingerprint(who.digits, `${AUDIT_KEY}, another`), phoneFingerprint(who.digits, AUDIT_KEY), 'and another key names them otherwise')

    // A number given but not a phone is named as such; only a missing one is "required".
    for (const typed of ['12', 'abc']) {
      const bad = await runOperatorCli(db, ['erase', '--phone', typed])
      t.equal(bad.code, 1)
      t.equal(bad.stderr, `--phone is not a valid phone number: the number as the shipments carry it, 10 to 15 digits, got '${typed}'\n`)
    }
    const missing = await runOperatorCli(db, ['erase'])
    t.equal(missing.code, 1)
    t.equal(missing.stderr, '--phone is required\n')
  })

  t.test('erase needs its audit key in production; elsewhere an unset one is the machine\'s development key', async (t) => {
    const who = person()
    const placed = await place(t, who.fields)
    await failWithReason(t, placed.orders[0]!.order_id, who)
    const refused = await runOperatorCli(db, ['erase', '--phone', who.fields.recipient_phone], { NODE_ENV: 'production' })
    t.equal(refused.code, 1)
    t.match(refused.stderr, 'ERASURE_AUDIT_KEY: is required (at least 32 characters)')
    t.match(refused.stderr, /^[^\n]*\n$/, 'in one line')
    t.notSame(await traced(who), [], 'nothing was erased')

    // An image's tree, where nothing can be written (here .dev-secrets is a file, so no key fits in it).
    const image = mkdtempSync(path.join(os.tmpdir(), 'erase-image-'))
    t.teardown(() => rmSync(image, { recursive: true, force: true }))
    for (const part of ['dist/services', 'dist/shared']) cpSync(path.join(projectRoot, part), path.join(image, part), { recursive: true })
    cpSync(path.join(projectRoot, 'package.json'), path.join(image, 'package.json'))
    symlinkSync(path.join(projectRoot, 'node_modules'), path.join(image, 'node_modules'))
    writeFileSync(path.join(image, '.dev-secrets'), '')
    const inImage = spawnSync(process.execPath, [path.join(image, 'dist/services/operator-cli/main.js'), 'erase', '--phone', who.fields.recipient_phone], { env: childEnv(db.env), encoding: 'utf8' })
    t.equal(inImage.status, 1, 'refused where no development key can be kept')
    t.match(inImage.stderr, /^ERASURE_AUDIT_KEY is not set, and no development key can be kept at \S+erasure-audit-key \(\w+\): set ERASURE_AUDIT_KEY/)
    t.notSame(await traced(who), [], 'and nothing was erased')

    const run = await runOperatorCli(db, ['erase', '--phone', who.fields.recipient_phone])
    t.equal(run.code, 0, run.stderr)
    const devKey = readFileSync(path.join(projectRoot, '.dev-secrets', 'erasure-audit-key'), 'utf8').trim()
    t.equal(run.json.phone, phoneFingerprint(who.digits, devKey), 'named with the key kept in .dev-secrets/')
    t.same(await traced(who), [], 'and erased')
  })
})
