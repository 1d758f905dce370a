import type { z } from 'zod'

/**
 * JSON that another process wrote (a pub/sub message, another service's answer) read through
 * `schema`: null when it is not JSON, or not of that shape. Never throws.
 */
export function parseJsonAs<S extends z.ZodType>(schema: S, text: string): z.infer<S> | null {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return null
  }
  const parsed = schema.safeParse(json)
  return parsed.success ? parsed.data : null
}
