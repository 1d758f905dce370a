import { randomUUID } from 'node:crypto'
import t from 'tap'
import { expireOfferIfDue, insertOffer } from '../../../shared/db/offers.js'
import { newOfferId } from '../../../shared/ids.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder } from '../../helpers/console.js'
import { useTestDb } from '../../helpers/db.js'

// Offers' rows (shared/db/offers.ts, DESIGN 17.1): the expiry job closes an offer only once the
// database's clock says its time is up, whatever the clock of the machine that ran the job.

t.test('an offer is expired by its job only when due by the database clock', async (t) => {
  const { sql } = await useTestDb(t)
  const { businessId } = await seedAccount(sql)
  const orderId = await seedOrder(sql, businessId)
  const courierId = randomUUID()
  await sql`insert into couriers (id, name, phone, vehicle_type, max_weight_kg) values (${courierId}, 'Due Rider', '+2348090000111', 'bike', 20)`
  const offer = await insertOffer(sql, { id: newOfferId(), orderId, courierId, offerS: 600 })
  t.ok(offer, 'the offer is made')

  t.equal(await expireOfferIfDue(sql, offer!.id), null, 'an expiry that comes early (another clock) closes nothing')
  t.same(await sql`select status from dispatch_offers where id = ${offer!.id}`, [{ status: 'pending' }], 'the offer stays pending, for the courier to accept')

  await sql`update dispatch_offers set expires_at = now() - interval '1 second' where id = ${offer!.id}`
  t.match(await expireOfferIfDue(sql, offer!.id), { id: offer!.id, status: 'expired' }, 'once due, it is expired')
  t.equal(await expireOfferIfDue(sql, offer!.id), null, 'and only once')
})

t.test('a disabled courier is offered nothing', async (t) => {
  const { sql } = await useTestDb(t)
  const { businessId } = await seedAccount(sql)
  const orderId = await seedOrder(sql, businessId)
  const courierId = randomUUID()
  await sql`insert into couriers (id, name, phone, vehicle_type, max_weight_kg, disabled_at) values (${courierId}, 'Gone Rider', '+2348090000112', 'bike', 20, now())`
  t.equal(await insertOffer(sql, { id: newOfferId(), orderId, courierId, offerS: 600 }), null)
  t.same(await sql`select id from dispatch_offers`, [], 'no row')
})
