// What never reaches a log line or a span: credentials in headers and in query strings.

/** Query parameters whose values are secrets: set-password and tracking tokens, CSRF tokens, keys, signatures, one-time codes. */
const SECRET_PARAM = /token|key|secret|password|signature|sig$|csrf|code/i

/**
 * The URL with the value of every secret-looking query parameter replaced by `[redacted]`,
 * for log lines and spans. A URL without a query string is returned as it is, at no cost.
 */
export function redactUrl(url: string): string {
  const query = url.indexOf('?')
  if (query === -1) return url
  const pairs = url.slice(query + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    return equals !== -1 && SECRET_PARAM.test(safeDecode(name)) ? `${name}=[redacted]` : pair
  })
  return `${url.slice(0, query)}?${pairs.join('&')}`
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** pino `redact` paths: credentials and personal data wherever a log line might carry them. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'res.headers["set-cookie"]',
  'headers.authorization', 'headers.cookie', 'headers["set-cookie"]', 'authorization', 'cookie',
  'api_key', '*.api_key', 'password', '*.password', 'token', '*.token', 'secret', '*.secret', '_csrf', '*._csrf',
  'recipient_phone', '*.recipient_phone', '*.alternate_phone', '*.sender_phone', '*[*].recipient_phone', '*[*].alternate_phone',
]
