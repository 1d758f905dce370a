import { PHONE_RULE, e164Phone } from '../../shared/phone.js'
import { isOrderId, isUuid } from '../../shared/ids.js'
import { MAX_AMOUNT_MAJOR, readMajorAmount } from '../../shared/money.js'
import type { z } from 'zod'
import type { Flags } from './command.js'
import { OperatorInputError } from './operator-input-error.js'


export function requiredText(flags: Flags, name: string, maxLength = 255): string {
  const value = flags[name]?.trim()
  if (!value) throw new OperatorInputError(`--${name} is required`)
  if (value.length > maxLength) throw new OperatorInputError(`--${name} must be at most ${maxLength} characters`)
  return value
}

export function optionalText(flags: Flags, name: string, maxLength = 255): string | null {
  return flags[name] === undefined ? null : requiredText(flags, name, maxLength)
}

/** Checked here so a malformed id is a clear message, never a Postgres cast error. */
export function requiredUuid(flags: Flags, name: string): string {
  const value = requiredText(flags, name)
  if (!isUuid(value)) throw new OperatorInputError(`--${name} must be a UUID, got '${value}'`)
  return value.toLowerCase()
}

export function requiredOrderId(flags: Flags, name: string): string {
  const value = requiredText(flags, name)
  if (!isOrderId(value)) throw new OperatorInputError(`--${name} must be an order id like ORD-7K2M9XQ4TB, got '${value}'`)
  return value
}

/** One of `allowed`, named in the refusal. */
export function requiredChoice<const T extends string>(flags: Flags, name: string, allowed: readonly T[]): T {
  const value = requiredText(flags, name)
  const choice = allowed.find((item) => item === value)
  if (choice === undefined) throw new OperatorInputError(`--${name} must be one of ${allowed.join(', ')}, got '${value}'`)
  return choice
}

/** A major-unit amount → kobo. `allowZero` is for rates, never for wallet credits. */
export function amountInKobo(flags: Flags, name: string, { allowZero = false } = {}): number {
  const value = requiredText(flags, name)
  const reading = readMajorAmount(value, { allowZero })
  if (reading.kind === 'ok') return reading.kobo
  if (reading.problem === 'too_large') throw new OperatorInputError(`--${name} must be at most ${MAX_AMOUNT_MAJOR}`)
  throw new OperatorInputError(`--${name} must be ${allowZero ? 'a non-negative' : 'a positive'} amount in major units with at most 2 decimals, got '${value}'`)
}

export function optionalNumber(flags: Flags, name: string, min: number, max: number): number | null {
  if (flags[name] === undefined) return null
  const text = requiredText(flags, name)
  const value = Number(text)
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new OperatorInputError(`--${name} must be a number from ${min} to ${max}, got '${text}'`)
  }
  return value
}

/** `--mode live` (the default) or `--mode test`, the sandbox: true for live. */
export function livemodeFlag(flags: Flags): boolean {
  if (flags.mode === undefined) return true
  return requiredChoice(flags, 'mode', ['live', 'test'] as const) === 'live'
}

/** A phone flag (`--phone` unless named) in its stored E.164 form (shared/phone.ts), refused before any connection when it is not one. */
export function phoneFlag(flags: Flags, name = 'phone'): string {
  const typed = requiredText(flags, name, 64)
  const phone = e164Phone(typed)
  if (phone === null) throw new OperatorInputError(`--${name} must be ${PHONE_RULE}, got '${typed}'`)
  return phone
}

/**
 * Values read from flags, checked by one of the API's schemas (shared/schemas), whose messages
 * begin with the field's name: a refusal reads `--phone must be …`, as the console says it of its field.
 */
export function readByApiRules<S extends z.ZodType>(schema: S, values: z.input<S>): z.output<S> {
  const parsed = schema.safeParse(values)
  if (parsed.success) return parsed.data
  throw new OperatorInputError(`--${parsed.error.issues[0]?.message ?? 'the flags are not valid'}`)
}
