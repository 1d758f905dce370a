import type { z } from 'zod'
import { ValidationError, type ErrorItem } from '../errors/validation-error.js'

/**
 * Parses a request body with a resource schema, or throws the API's 400 with every violation.
 * A field sent as `null` counts as omitted. Issues inside an array element are prefixed with
 * the element's index: `[3].weight …`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(Array.isArray(body) ? body.map(withoutNulls) : withoutNulls(body))
  if (parsed.success) return parsed.data
  throw new ValidationError(parsed.error.issues.map(toErrorItem))
}

function withoutNulls(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  if (!Object.values(value).includes(null)) return value
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null))
}

function toErrorItem(issue: z.core.$ZodIssue): ErrorItem {
  const [first, second] = issue.path
  if (typeof first === 'number') {
    if (second === undefined) return { index: first, message: `[${first}] ${issue.message}` }
    return { index: first, field: String(second), message: `[${first}].${issue.message}` }
  }
  return { ...(first !== undefined && { field: String(first) }), message: issue.message }
}
