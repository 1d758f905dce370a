import t from 'tap'
import { PricingError } from '../../../shared/errors/pricing-error.js'
import { checkMaxPrice } from '../../../shared/pricing/held-quote.js'

// max_price (shared/pricing/held-quote.ts): a price equal to its limit is charged, one above it is
// refused, however large the amount and however many decimals the limit has.

const refuses = (price: number, maxPrice: number) => {
  try {
    checkMaxPrice(0, price, maxPrice)
    return false
  } catch (err) {
    if (err instanceof PricingError) return true
    throw err
  }
}

t.test('a price equal to its limit passes and a kobo more is refused, up to the largest card price', async (t) => {
  // Every amount of the form n.31 and n.07 naira across the range, as a JSON body would carry it.
  const wrong: string[] = []
  for (let naira = 1; naira <= 1e9; naira = naira * 3 + 7) {
    for (const kobo of [7, 31, 99]) {
      const price = naira * 100 + kobo
      const limit = Number(`${naira}.${String(kobo).padStart(2, '0')}`)
      if (refuses(price, limit)) wrong.push(`${price} kobo refused at its own limit ${limit}`)
      if (!refuses(price + 1, limit)) wrong.push(`${price + 1} kobo passed the limit ${limit}`)
    }
  }
  t.same(wrong, [], 'no amount is refused at its own limit or let past it')
  t.equal(refuses(63288670531, 632886705.31), false, 'an amount whose kobo times 100 is inexact in floating point')
})

t.test('a limit with more decimals than money has is never rounded up past itself', async (t) => {
  t.equal(refuses(350000, 3499.999), true)
  t.equal(refuses(350000, 3499.99999999), true)
  t.equal(refuses(350000, 3500.001), false)
  t.equal(refuses(3510, 35.1), false, '35.1 × 100 is 3509.9999999999995 in floating point, and still allows 3510 kobo')
})
