import { z } from 'zod'
import { isStorableText, UNSTORABLE_TEXT } from '../../shared/schemas/fields.js'

/** A form body that is not what the page's form sends (a tampered or truncated post): 400, never a 500. */
export class FormError extends Error {
  override name = 'FormError'
  readonly statusCode = 400
}

/** The names a form shows for its fields (its labels' words), by field: messages say these, not the keys. */
export type FieldNames = Readonly<Record<string, string>>

/** Reads a posted form or a query string with its zod schema; a field sent twice or a missing one is a `FormError`. */
export function readForm<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  refuseUnstorable(body)
  const parsed = schema.safeParse(body ?? {})
  if (!parsed.success) throw new FormError(parsed.error.issues.map((issue) => describeIssue(issue)).join('; '))
  return parsed.data
}

/** A checkbox group (or a repeated query parameter): one value or several under one name, always a list. */
export function several<T extends z.ZodType>(item: T) {
  return z.union([item, z.array(item)]).optional().transform((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]))
}

/** A form as it was typed, with a message at each field refused: shown again, nothing the person typed is lost. */
export interface FormState {
  values: Readonly<Record<string, string>>
  errors: Readonly<Record<string, string>>
}

/** A form nobody has typed in yet. */
export const BLANK_FORM: FormState = { values: {}, errors: {} }

export type FormCheck<T> = { kind: 'ok'; input: T; values: FormState['values'] } | { kind: 'refused'; form: FormState }

/**
 * Reads a form a person fills in: what its rules refuse comes back as the form to show again,
 * with what was typed kept and each refused field's first message, naming the field as the form
 * does (`names`). Text PostgreSQL cannot hold is still a `FormError`: no form of the console sends it.
 */
export function checkForm<S extends z.ZodType>(schema: S, body: unknown, names: FieldNames = {}): FormCheck<z.infer<S>> {
  refuseUnstorable(body)
  const values = typeof body === 'object' && body !== null
    ? Object.fromEntries(Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
    : {}
  const parsed = schema.safeParse(body ?? {})
  if (parsed.success) return { kind: 'ok', input: parsed.data, values }
  const errors: Record<string, string> = {}
  for (const issue of parsed.error.issues) {
    const [field] = issue.path
    if (typeof field !== 'string') throw new FormError(describeIssue(issue, names))
    errors[field] ??= describeIssue(issue, names)
  }
  return { kind: 'refused', form: { values, errors } }
}

/** Whether the form comes back refused: some field has a message. */
export function isRefused(form: FormState): boolean {
  return Object.keys(form.errors).length > 0
}

/** The form refused at one field, for a rule its schema cannot know (a wallet that is not opened). */
export function refusedAt(values: FormState['values'], field: string, message: string): FormState {
  return { values, errors: { [field]: message } }
}

/** A field's kept value and its message, for `field()` and `select()` of pages/layout.ts. */
export function typed(form: FormState, name: string): { name: string; value: string | undefined; error: string | null } {
  return { name, value: form.values[name], error: form.errors[name] ?? null }
}

// Every value reaches PostgreSQL as text at some point (a search, a login, a name): `%00` would be a 500 there.
function refuseUnstorable(body: unknown): void {
  if (typeof body !== 'object' || body === null) return
  for (const [field, value] of Object.entries(body)) {
    const values: unknown[] = Array.isArray(value) ? value : [value]
    if (values.some((item) => typeof item === 'string' && !isStorableText(item))) throw new FormError(`${field}: ${UNSTORABLE_TEXT}`)
  }
}

/** A form's problem in words a person reads: the field, by the name the form shows, and what it must be. */
function describeIssue(issue: z.core.$ZodIssue, names: FieldNames = {}): string {
  const key = issue.path.join('.')
  const field = names[key] ?? (key || 'the form')
  // The API's field builders (shared/schemas/fields.ts) start their messages with the field's key: the API's words, the form's name.
  if (key !== '' && issue.message.startsWith(`${key} `)) return field + issue.message.slice(key.length)
  if (issue.code === 'too_big' && issue.origin === 'string') return `${field} must be at most ${String(issue.maximum)} characters`
  if (issue.code === 'too_small' && issue.origin === 'string') return issue.minimum === 1 ? `${field} should not be empty` : `${field} must be at least ${String(issue.minimum)} characters`
  if (issue.code === 'invalid_format') return `${field} must be a ${issue.format === 'uuid' ? 'UUID' : issue.format}`
  // The schemas' own messages are written to follow the field's name: `must be a placement id`.
  return /^(must|should) /.test(issue.message) ? `${field} ${issue.message}` : `${field}: ${issue.message}`
}

/** `?mode=test` shows test data; anything else is live. */
export function livemodeOf(query: { mode?: unknown }): boolean {
  return query.mode !== 'test'
}

export function modeQuery(livemode: boolean, prefix = '?'): string {
  return livemode ? '' : `${prefix}mode=test`
}
