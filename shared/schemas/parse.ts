import { z } from 'zod'
import { ValidationError, type ErrorItem } from '../errors/validation-error.js'

/**
 * Parses a request body with a resource schema, or throws the API's 400 with every violation.
 * A field sent as `null` counts as omitted (a list body drops its elements' nulls in `listBody`,
 * once its length passed). Issues inside an array element are prefixed with the element's
 * index: `[3].weight …`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(withoutNulls(body))
  if (parsed.success) return parsed.data
  throw new ValidationError(parsed.error.issues.map(toErrorItem))
}

interface ListRules {
  min: number
  max: number
  message: string
}

/**
 * A JSON array body of `min` to `max` elements. The length is checked before any element is
 * looked at, so an array of 100 000 elements costs one comparison, not 100 000 validations
 * (docs/contracts.md, "Validation is linear in the input"). The OpenAPI document shows the array schema.
 */
export function listBody<S extends z.ZodType>(element: S, { min, max, message }: ListRules) {
  const list = z.array(element, { error: message }).min(min, { error: message }).max(max, { error: message })
  return z.preprocess((body, ctx) => {
    if (Array.isArray(body) && body.length >= min && body.length <= max) return body.map((element) => withoutNulls(element))
    ctx.addIssue({ code: 'custom', message })
    return z.NEVER
  }, list)
}

/**
 * The object without its `null` fields, and those of the objects it holds one level down (a
 * shipment's `proof`): deeper nesting is no field of any body, so it is left for the schema to refuse.
 */
function withoutNulls(value: unknown, depth = 1): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  let kept: Record<string, unknown> | null = null
  for (const [key, field] of Object.entries(value)) {
    const inner = depth > 0 ? withoutNulls(field, depth - 1) : field
    if (field !== null && inner === field) continue
    kept ??= { ...value }
    if (field === null) delete kept[key]
    else kept[key] = inner
  }
  return kept ?? value
}

function toErrorItem(issue: z.core.$ZodIssue): ErrorItem {
  const [first, second] = issue.path
  if (typeof first === 'number') {
    if (second === undefined) return { index: first, message: `[${first}] ${issue.message}` }
    return { index: first, field: fieldOf(issue.path.slice(1)), message: `[${first}].${issue.message}` }
  }
  return { ...(first !== undefined && { field: fieldOf(issue.path) }), message: issue.message }
}

/** The field a path names: its keys, dotted (`proof.pin`), without the positions inside a list (`event_types`). */
function fieldOf(path: PropertyKey[]): string {
  return path.filter((part) => typeof part !== 'number').map(String).join('.')
}
