import t from 'tap'
import { e164Phone } from '../../shared/phone.js'
import { schemaAt } from '../helpers/db.js'

// A courier's phone in one stored form (DESIGN 14): the rule of shared/phone.ts, and
// migration 00023, which brings the phones stored as typed to it and makes a phone one enabled
// courier's without failing on couriers that already share one.

const READ: [string, string | null][] = [
  ['0809 000 0016', '+2348090000016'],
  ['08090000016', '+2348090000016'],
  ['+234 809 000 0016', '+2348090000016'],
  [' +234-809-000-0016 ', '+2348090000016'],
  ['+234 (0) 809 000 0016', '+2348090000016'],
  ['2348090000016', '+2348090000016'],
  ['0800 000 0001', '+2348000000001'],
  ['+44 20 7946 0958', '+442079460958'],
  ['+1 (212) 555-0100', '+12125550100'],
  ['123', null],
  ['', null],
  ['0809 000 001', null],
  ['+234 809 000 00166', null],
  ['+2340800000000', null],
  ['00234 809 000 0016', null],
  ['0809 000 0016 ext 2', null],
  ['+0 809 000 0016', null],
  ['+12345', null],
  ['8090000016', null],
]

t.test('e164Phone: E.164, a number without its country code read as Nigerian', async (t) => {
  for (const [typed, stored] of READ) t.equal(e164Phone(typed), stored, `'${typed}' → ${stored}`)
})

t.test('migration 00023 stores every readable phone in E.164 and makes a phone one enabled courier\'s, keeping couriers that shared one', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, 22)

  const rows: [string, string, string | null][] = [
    // id suffix, phone as typed, disabled_at
    ['01', '0809 000 0016', null],
    ['02', '+234 809 000 0016', null],
    ['03', '08090000016', '2026-01-01T00:00:00Z'],
    ['04', '+234 (0) 809 000 0017', null],
    ['05', '123', null],
    ['06', '123', null],
    ['07', '+44 20 7946 0958', null],
    ['08', 'call the office', null],
  ]
  for (const [n, phone, disabledAt] of rows) {
    await sql`insert into couriers (id, name, phone, vehicle_type, max_weight_kg, disabled_at, created_at)
      values (${`00000000-0000-4000-8000-0000000000${n}`}, ${`Rider ${n}`}, ${phone}, 'bike', 20, ${disabledAt}, ${new Date(Date.UTC(2026, 0, Number(n)))})`
  }
  await migrateRest()

  const after = await sql<{ id: string; phone: string; phoneSharedWith: string | null }[]>`select id, phone, phone_shared_with from couriers order by id`
  const id = (n: string) => `00000000-0000-4000-8000-0000000000${n}`
  t.same(after.map((row) => [row.id.slice(-2), row.phone, row.phoneSharedWith]), [
    ['01', '+2348090000016', null],
    ['02', '+2348090000016', id('01')],
    ['03', '+2348090000016', null],
    ['04', '+2348090000017', null],
    ['05', '123', null],
    ['06', '123', id('05')],
    ['07', '+442079460958', null],
    ['08', 'call the office', null],
  ], 'readable phones in E.164 (the rule\'s own results), unreadable ones as typed; a later enabled courier with the same phone names the one who had it first')
  for (const [n, typed] of rows) {
    const stored = after.find((row) => row.id === id(n))!.phone
    t.equal(stored, e164Phone(typed) ?? typed, `the migration reads '${typed}' as the code does`)
  }

  const insert = (n: string, phone: string) => sql`insert into couriers (id, name, phone, vehicle_type, max_weight_kg) values (${id(n)}, 'New', ${phone}, 'bike', 20)`
  await t.rejects(insert('10', '+2348090000016'), { code: '23505', constraint_name: 'couriers_phone_enabled' }, 'the database refuses a new enabled courier with a phone an enabled one holds')
  await t.rejects(insert('11', '+2348090000017'), { code: '23505' })
  await sql`update couriers set disabled_at = now() where id = ${id('04')}`
  await insert('12', '+2348090000017')
  t.pass('a disabled courier\'s phone can go to a new courier')
})
