import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { loadConfig, webhookKeysEnv } from '../../../shared/config.js'
import { findCourier } from '../../../shared/db/couriers.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { erasePerson, phoneDigits } from '../../../shared/orders/personal-data.js'
import { photoLinks } from '../../../shared/storage/photos.js'
import { seedAccount } from '../../helpers/accounts.js'
import { onShift, placeOrders, type TestCourier } from '../../helpers/couriers.js'
import { JPEG, multipart, PNG, usePhotoStore } from '../../helpers/photos.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// Proof of delivery by photo (DESIGN 14): a shipment asks for one, the courier's delivery carries
// it as multipart/form-data (JPEG or PNG by its bytes, ≤ 5 MB), the business reads it through
// `photo_url` with its key, which answers a link any browser opens for 15 minutes.
const photos = usePhotoStore(t)
const PUBLIC = 'https://api.courier.example'
const { gateway, db } = await startStack(t, { env: { ...photos.env, PUBLIC_BASE_URL: PUBLIC } })
const account = await seedAccount(db.sql, { balance: 1_000_000 })
const other = await seedAccount(db.sql, { balance: 1_000_000 })
const business = bearer(account.apiKey)
const read = async (orderId: string) => (await gateway.inject({ method: 'GET', url: `/v2/business/orders/${orderId}`, headers: business })).json()

/** An order of `proof`, assigned to and picked up by `rider`. */
async function pickedUp(rider: TestCourier, proof: Record<string, boolean>, fields: Record<string, unknown> = {}): Promise<string> {
  const [orderId] = await placeOrders(gateway, account.apiKey, [shipment({ proof, ...fields })])
  const row = await findCourier(db.sql, rider.id)
  t.equal((await changeOrder(db.sql, { orderId: orderId!, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(row!), reason: null })).kind, 'changed')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/pickup`, headers: rider.auth })).statusCode, 200)
  return orderId!
}

const deliver = (rider: TestCourier, orderId: string, body: ReturnType<typeof multipart>) =>
  gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: { ...rider.auth, ...body.headers }, payload: body.payload })
const photo = (bytes: Buffer, type = 'image/png') => ({ field: 'photo', name: 'door.png', type, bytes })

t.test('a photo is required when asked for, must be an image, at most 5 MB; nothing refused stays in the store', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Photo Rider', ISLAND)
  const orderId = await pickedUp(rider, { photo: true })
  t.match(await read(orderId), { proof: { photo: true } })

  const asJson = await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: rider.auth, payload: {} })
  t.equal(asJson.statusCode, 400)
  t.equal(asJson.json().message, `a photo is required to deliver ${orderId}`)
  t.same(asJson.json().errors, [{ field: 'photo', message: `a photo is required to deliver ${orderId}` }], 'the refusal names the photo field')

  const text = await deliver(rider, orderId, multipart({}, [photo(Buffer.from('not an image, whatever the name says'), 'image/png')]))
  t.equal(text.statusCode, 400)
  t.match(text.json(), { statusCode: 400, message: 'photo must be a JPEG or PNG image', errors: [{ field: 'photo' }], path: `/v2/courier/orders/${orderId}/deliver` })

  const huge = await deliver(rider, orderId, multipart({}, [photo(Buffer.concat([JPEG, Buffer.alloc(6 * 1024 * 1024)]), 'image/jpeg')]))
  t.equal(huge.statusCode, 413)
  t.match(huge.json(), { statusCode: 413, message: 'photo must be at most 5 MB' })

  const twoFiles = await deliver(rider, orderId, multipart({}, [photo(PNG), photo(PNG)]))
  t.equal(twoFiles.statusCode, 400)
  const badPin = await deliver(rider, orderId, multipart({ pin: 'x'.repeat(20) }, [photo(PNG)]))
  t.equal(badPin.statusCode, 400, 'the fields are checked as the JSON body is')

  t.match(await read(orderId), { status: 'picked_up', proof_of_delivery: null }, 'nothing moved')
  t.same(photos.files(), [], 'no refused photo is kept')
})

t.test('a wrong PIN with a photo: refused, and the photo is not kept', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Pin Photo Rider', ISLAND)
  const orderId = await pickedUp(rider, { pin: true, photo: true })
  const { delivery_pin: pin } = await read(orderId)
  const held = await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${orderId}`, headers: rider.auth })
  t.match(held.json(), { proof: { pin_required: true, photo_required: true } }, 'the courier reads what the door needs')
  const plain = await pickedUp(rider, {})
  t.match((await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${plain}`, headers: rider.auth })).json(), { proof: { pin_required: false, photo_required: false } })
  const wrong = await deliver(rider, orderId, multipart({ pin: pin === '0000' ? '0001' : '0000' }, [photo(PNG)]))
  t.equal(wrong.statusCode, 400)
  t.equal(wrong.json().message, `Wrong PIN for ${orderId}`)
  t.same(photos.files(), [])

  const right = await deliver(rider, orderId, multipart({ pin }, [photo(JPEG, 'image/jpeg')]))
  t.equal(right.statusCode, 200, right.body)
  t.notOk(/"(delivery_)?pin"|"price"|photo_url/.test(right.body), 'the courier is shown neither the PIN, the price nor the photo link')
  t.match(await read(orderId), { status: 'delivered', proof_of_delivery: { pin_required: true, pin_verified: true, photo_required: true, photo_url: `${PUBLIC}/v2/business/orders/${orderId}/proof/photo` } })
  t.match(photos.files(), [new RegExp(`^proof/${orderId}/[0-9a-f]{24}\\.jpg$`)], 'kept as a JPEG, under an unguessable name')
  const kept = photos.files()

  // Sent again (the answer was lost on the way): answered as the first, and no second photo kept.
  const again = await deliver(rider, orderId, multipart({ pin }, [photo(JPEG, 'image/jpeg')]))
  t.equal(again.statusCode, 200, again.body)
  t.strictSame(again.json(), right.json(), 'a retried delivery answers as the first did')
  t.same(photos.files(), kept, 'the first photo is the one kept, and the only one')
  t.match(await read(orderId), { proof_of_delivery: { photo_url: `${PUBLIC}/v2/business/orders/${orderId}/proof/photo` } })
})

t.test('a photo for an order the courier does not hold (another\'s, or none) is the 404, for one not picked up yet the 409, and nothing is written, not even a folder', async (t) => {
  const holder = await onShift(gateway, db.sql, 'Holding Rider', ISLAND)
  const stranger = await onShift(gateway, db.sql, 'Stranger Rider', ISLAND)
  const orderId = await pickedUp(holder, { photo: true })
  for (const target of [orderId, 'ORD-ZZZZZZZZZZ']) {
    const answer = await deliver(stranger, target, multipart({}, [photo(PNG)]))
    t.equal(answer.statusCode, 404, answer.body)
    t.equal(answer.json().message, `Order ${target} was not found`)
    t.notOk(existsSync(path.join(photos.dir, 'proof', target)), `nothing under proof/${target}`)
  }
  t.match(await read(orderId), { status: 'picked_up', proof_of_delivery: null }, 'the holder\'s order is untouched')

  // The holder's own order, assigned and not yet picked up: the state machine's 409, nothing written.
  const [assigned] = await placeOrders(gateway, account.apiKey, [shipment({ proof: { photo: true } })])
  t.equal((await changeOrder(db.sql, { orderId: assigned!, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder((await findCourier(db.sql, holder.id))!), reason: null })).kind, 'changed')
  const early = await deliver(holder, assigned!, multipart({}, [photo(PNG)]))
  t.equal(early.statusCode, 409, early.body)
  t.equal(early.json().message, `cannot move ${assigned} from assigned to delivered`)
  t.notOk(existsSync(path.join(photos.dir, 'proof', assigned!)), `nothing under proof/${assigned}`)
})

t.test('the business reads its photo: a link that works without the key until it expires', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Link Rider', ISLAND)
  const orderId = await pickedUp(rider, { photo: true })
  t.equal((await deliver(rider, orderId, multipart({}, [photo(PNG)]))).statusCode, 200)
  const delivered = await read(orderId)
  const path = new URL(delivered.proof_of_delivery.photo_url).pathname

  const answer = await gateway.inject({ method: 'GET', url: path, headers: business })
  t.equal(answer.statusCode, 200, answer.body)
  const location = answer.json().url
  t.match(location, new RegExp(`^${PUBLIC}/v2/proof-photos/[A-Za-z0-9_-]+/\\d+/[A-Za-z0-9_-]+$`))
  const expiresIn = Date.parse(answer.json().expires_at) - Date.parse(answer.headers.date ?? new Date().toUTCString())
  t.ok(expiresIn > 14 * 60_000 && expiresIn <= 15 * 60_000 + 1000, `valid 15 minutes (${expiresIn} ms)`)

  const link = new URL(String(location)).pathname
  const image = await gateway.inject({ method: 'GET', url: link })
  t.equal(image.statusCode, 200, 'no key needed')
  t.equal(image.headers['content-type'], 'image/png')
  t.equal(image.headers['x-content-type-options'], 'nosniff', 'an uploaded file is never sniffed into another type')
  t.same(image.rawPayload, PNG, 'the very bytes the courier sent')

  t.equal((await gateway.inject({ method: 'GET', url: path })).statusCode, 401, 'photo_url itself takes the key')
  const stranger = await gateway.inject({ method: 'GET', url: path, headers: bearer(other.apiKey) })
  t.equal(stranger.statusCode, 404, "another business's key: not found")
  t.equal(stranger.json().message, `Order ${orderId} was not found`)

  const [encodedKey, expires, signature] = link.split('/').slice(-3)
  const tampered = await gateway.inject({ method: 'GET', url: link.replace(`/${expires}/`, `/${Number(expires) + 3600}/`) })
  t.equal(tampered.statusCode, 404, 'a link made longer is no link')
  t.equal((await gateway.inject({ method: 'GET', url: link.replace(signature!, 'A'.repeat(signature!.length)) })).statusCode, 404)

  // The same key and signature, an hour past its expiry: what a link is once 15 minutes are gone.
  const [signing] = loadConfig(webhookKeysEnv, db.env).WEBHOOK_SECRET_KEYS
  const key = Buffer.from(encodedKey!, 'base64url').toString()
  const expired = photoLinks(signing!.key).path(key, Math.floor(Date.now() / 1000) - 3600)
  const late = await gateway.inject({ method: 'GET', url: `/v2/proof-photos/${expired}` })
  t.equal(late.statusCode, 410)
  t.match(late.json(), { statusCode: 410, message: /expired/ })

  const none = await onShift(gateway, db.sql, 'No Photo Rider', ISLAND)
  const plain = await pickedUp(none, {})
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${plain}/deliver`, headers: none.auth, payload: {} })).statusCode, 200)
  t.match(await read(plain), { proof_of_delivery: { photo_required: false, photo_url: null } })
  const noPhoto = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${plain}/proof/photo`, headers: business })
  t.equal(noPhoto.statusCode, 404)
  t.equal(noPhoto.json().message, `No delivery photo for ${plain}`)
})

t.test("erasing the recipient's data removes the photo from the store and its link everywhere", async (t) => {
  const rider = await onShift(gateway, db.sql, 'Erase Rider', ISLAND)
  const phone = '+234 809 555 0142'
  const orderId = await pickedUp(rider, { photo: true }, { recipient_phone: phone })
  t.equal((await deliver(rider, orderId, multipart({}, [photo(PNG)]))).statusCode, 200)
  const path = new URL((await read(orderId)).proof_of_delivery.photo_url).pathname
  const link = new URL((await gateway.inject({ method: 'GET', url: path, headers: business })).json().url).pathname
  t.ok(photos.files().some((file) => file.startsWith(`proof/${orderId}/`)))

  const erased = await erasePerson(db.sql, photos.store, 'test', phoneDigits(phone)!, 'an erasure audit key of the test, 32+ chars')
  t.match(erased, { kind: 'erased', orderIds: [orderId] })
  t.notOk(photos.files().some((file) => file.startsWith(`proof/${orderId}/`)), 'the photo is gone from the store')
  t.match(await read(orderId), { proof_of_delivery: { photo_required: true, photo_url: null } })
  t.equal((await gateway.inject({ method: 'GET', url: path, headers: business })).statusCode, 404)
  t.equal((await gateway.inject({ method: 'GET', url: link })).statusCode, 404, 'a link handed out before is dead too')
  const events = (await gateway.inject({ method: 'GET', url: '/v2/business/events?limit=100', headers: business })).json().data
  const delivered = events.find((event: { type: string; data: { order: { order_id: string } } }) => event.type === 'order.delivered' && event.data.order.order_id === orderId)
  t.equal(delivered?.data.order.proof_of_delivery.photo_url, null, 'and from the order.delivered event')
})
