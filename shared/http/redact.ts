// What never reaches a log line or a span: credentials in headers, in query strings and in the
// paths of links that are their own credential.

/** Query parameters whose values are secrets: set-password and tracking tokens, CSRF tokens, keys, signatures, one-time codes. */
const SECRET_PARAM = /token|key|secret|password|signature|sig$|csrf|code/i

/**
 * Links whose path is the credential (a path, or a whole URL's): everything after the prefix
 * goes. A tracking link's token (`/t/{token}`) shows the delivery PIN and the courier's position;
 * a proof photo's link (`/v2/proof-photos/{key}/{expires}/{signature}`) shows the photo.
 */
const SECRET_PATH = /^((?:[a-z][a-z0-9+.-]*:\/\/[^/?#]*)?\/(?:t|v2\/proof-photos)\/)[^?#]+/i

/**
 * The URL with the value of every secret-looking query parameter, and the credential of a link
 * whose path is one, replaced by `[redacted]`, for log lines and spans. Any other URL without a
 * query string is returned as it is, for one regular-expression test.
 */
export function redactUrl(url: string): string {
  const redacted = url.replace(SECRET_PATH, '$1[redacted]')
  const query = redacted.indexOf('?')
  if (query === -1) return redacted
  const pairs = redacted.slice(query + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    return equals !== -1 && SECRET_PARAM.test(safeDecode(name)) ? `${name}=[redacted]` : pair
  })
  return `${redacted.slice(0, query)}?${pairs.join('&')}`
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
