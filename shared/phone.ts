// A phone in the one form the platform stores, compares and logs in with: E.164 (DESIGN 14 for
// couriers; a business's phone, the sender of its shipments, alike).
// The platform serves Nigeria (CURRENCY NGN), so a number written without a country code is
// Nigerian: `0809 000 0016` and `+234 809 000 0016` are both `+2348090000016`. Other countries
// are written with their `+` code. Spaces, dashes, dots and brackets are only punctuation.

/** What `e164Phone` accepts, for refusals. */
export const PHONE_RULE = 'a phone number: 0 and 10 digits or +234 and 10 digits (Nigeria), or + and a country code, 8 to 15 digits in all'

// One pass, no backtracking (docs/contracts.md: validation is linear in the input).
const PUNCTUATED_NUMBER = /^\+?[\d\s().-]+$/

/** The E.164 form of a phone as typed, or null when it is not a phone number by the rule above. */
export function e164Phone(typed: string): string | null {
  const text = typed.trim()
  if (!PUNCTUATED_NUMBER.test(text)) return null
  const digits = text.replace(/\D/g, '')
  if (text.startsWith('+')) {
    if (!digits.startsWith('234')) return /^[1-9]\d{7,14}$/.test(digits) ? `+${digits}` : null
    // `+234 (0) 809 …`: the national 0 written after the country code is dropped.
    const rest = digits.slice(3)
    const national = rest.length === 11 && rest.startsWith('0') ? rest.slice(1) : rest
    return nigerian(national)
  }
  if (digits.length === 11 && digits.startsWith('0')) return nigerian(digits.slice(1))
  if (digits.length === 13 && digits.startsWith('234')) return nigerian(digits.slice(3))
  return null
}

const nigerian = (national: string) => (/^[1-9]\d{9}$/.test(national) ? `+234${national}` : null)
