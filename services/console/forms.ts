import type { z } from 'zod'
import { isStorableText, UNSTORABLE_TEXT } from '../../shared/schemas/fields.js'

/** A form body that is not what the page's form sends (a tampered or truncated post): 400, never a 500. */
export class FormError extends Error {
  override name = 'FormError'
  readonly statusCode = 400
}

/** Reads a posted form or a query string with its zod schema; a field sent twice or a missing one is a `FormError`. */
export function readForm<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  // Every value reaches PostgreSQL as text at some point (a search, a login, a name): `%00` would be a 500 there.
  if (typeof body === 'object' && body !== null) {
    for (const [field, value] of Object.entries(body)) {
      const values: unknown[] = Array.isArray(value) ? value : [value]
      if (values.some((item) => typeof item === 'string' && !isStorableText(item))) throw new FormError(`${field}: ${UNSTORABLE_TEXT}`)
    }
  }
  const parsed = schema.safeParse(body ?? {})
  if (!parsed.success) throw new FormError(parsed.error.issues.map(describeIssue).join('; '))
  return parsed.data
}

/** A form's problem in words a person reads on the error page: the field, and what it must be. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.join('.') || 'the form'
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
