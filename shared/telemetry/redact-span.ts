import type { Span } from '@opentelemetry/api'
import { redactUrl } from '../http/redact.js'

// The attributes in which the HTTP instrumentations record a URL, whole or in part.
const URL_ATTRIBUTES = ['url.full', 'url.path', 'http.url', 'http.target'] as const

/**
 * Rewrites the URL attributes an instrumentation recorded at the span's start so that no secret
 * query parameter (a set-password token, a key in a webhook URL) and no link that is its own
 * credential (a tracking link, a proof photo's link) is exported. Run from the instrumentations'
 * request hooks, before the span ends.
 */
export function redactSpanUrls(span: Span): void {
  const attributes = 'attributes' in span && typeof span.attributes === 'object' && span.attributes !== null ? span.attributes : null
  if (!attributes) return
  for (const name of URL_ATTRIBUTES) {
    const value = name in attributes ? Reflect.get(attributes, name) : undefined
    if (typeof value !== 'string') continue
    const redacted = redactUrl(value)
    if (redacted !== value) span.setAttribute(name, redacted)
  }
  const query = 'url.query' in attributes ? Reflect.get(attributes, 'url.query') : undefined
  if (typeof query === 'string') span.setAttribute('url.query', redactUrl(`?${query}`).slice(1))
}
