import { toMajor } from '../../shared/money.js'

const formats = new Map<string, Intl.NumberFormat>()

/** Kobo as naira with the currency (`₦12,500.00`), the way every page shows money. */
export function money(kobo: number, currency: string): string {
  let format = formats.get(currency)
  if (!format) {
    format = new Intl.NumberFormat('en-NG', { style: 'currency', currency, currencyDisplay: 'symbol' })
    formats.set(currency, format)
  }
  return format.format(toMajor(kobo))
}

/** A major-unit amount as shown by the API (naira, a number) in the same form. */
export function majorMoney(major: number, currency: string): string {
  return money(Math.round(major * 100), currency)
}

export function when(at: Date | string): string {
  const date = typeof at === 'string' ? new Date(at) : at
  return date.toISOString().replace('T', ' ').slice(0, 19) + ' UTC'
}

/** A time as a datetime-local field holds it, in UTC like `when`: `2026-11-22T10:00`, seconds only when there are some. */
export function utcInputValue(at: Date): string {
  return at.toISOString().slice(0, 23).replace(/(:00)?\.000$/, '')
}

// A formatter takes about a quarter of a millisecond to build: the pair of each zone is made once
// (a deployment has one), not on every page a recipient or a rider refreshes.
const clocks = new Map<string, { clock: Intl.DateTimeFormat; dated: Intl.DateTimeFormat }>()

/** Times on the pages the public sees (tracking, the courier app), in their zone (TRACKING_TIME_ZONE) and named: `18:40 WAT`. */
export function clocksOf(timeZone: string): { clock: Intl.DateTimeFormat; dated: Intl.DateTimeFormat } {
  let found = clocks.get(timeZone)
  if (!found) {
    found = {
      clock: new Intl.DateTimeFormat('en-NG', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }),
      dated: new Intl.DateTimeFormat('en-NG', { timeZone, day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }),
    }
    clocks.set(timeZone, found)
  }
  return found
}

export function modeName(livemode: boolean): string {
  return livemode ? 'live' : 'test'
}

/**
 * Text for a spreadsheet cell: a value a spreadsheet would run as a formula (starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, so a reference typed by anyone
 * stays text in the statement a business opens (OWASP's CSV injection advice).
 */
export function spreadsheetText(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
}
