/*
 * What a production process (NODE_ENV=production) refuses on top of the schemas' own checks:
 * placeholder, short or well-known secrets, and the webhook relaxations meant for a laptop.
 * A copied example file or a forgotten CHANGE_ME then stops the start instead of deploying a
 * secret every reader of the repository knows.
 */

/** Settings that hold a secret: the bearer token, the session secret, keys and key rings. */
const SECRET_NAME = /(^|_)(TOKEN|SECRET|SECRETS|KEY|KEYS|PASSWORD)$/

/** The shortest secret accepted in production: 32 characters (24 random bytes in base64). */
export const MIN_PRODUCTION_SECRET_LENGTH = 32

/** Words that mark a value as a placeholder or a published default, wherever they appear. */
const WELL_KNOWN_WORDS = ['changeme', 'password', 'secret', 'placeholder', 'example', 'insecure', 'compose', 'default', 'letmein', 'qwerty', '123456']

/** Passwords in DATABASE_URL or REDIS_URL that are a published default in themselves. */
const WELL_KNOWN_PASSWORDS = new Set(['courier', 'postgres', 'redis', 'root', 'admin'])

/** The reason a secret value is unfit for production, or undefined when it is fit. */
export function weakSecretReason(value: string): string | undefined {
  const folded = value.toLowerCase().replace(/[^a-z0-9]/g, '')
  const word = WELL_KNOWN_WORDS.find((candidate) => folded.includes(candidate))
  if (word !== undefined) return `is a placeholder or well-known value (contains "${word}")`
  if (value.length < MIN_PRODUCTION_SECRET_LENGTH) return `must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters in production`
  // Random output of that length has far more distinct characters: `aaaa…`, `abab…`, `x` * 32.
  if (new Set(value).size < 8) return 'is too repetitive to be random'
  return undefined
}

function weakUrlPassword(url: string): string | undefined {
  let password: string
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {
    return undefined
  }
  if (password === '') return undefined
  const folded = password.toLowerCase().replace(/[^a-z0-9]/g, '')
  if (WELL_KNOWN_PASSWORDS.has(folded) || WELL_KNOWN_WORDS.some((word) => folded.includes(word))) return 'has a placeholder or well-known password'
  return undefined
}

/**
 * The problems of a parsed configuration under NODE_ENV=production, each as `NAME: message`;
 * none outside production. `raw` is the environment as given, so a key ring a schema turns
 * into an object is still judged by its text.
 */
export function productionProblems(config: Record<string, unknown>, raw: Record<string, string | undefined>): string[] {
  if (config.NODE_ENV !== 'production') return []
  const problems: string[] = []
  for (const name of Object.keys(config)) {
    const text = raw[name] ?? (typeof config[name] === 'string' ? config[name] : undefined)
    if (text === undefined) continue
    if (SECRET_NAME.test(name)) {
      const reason = weakSecretReason(text)
      if (reason) problems.push(`${name}: ${reason}; generate one with \`openssl rand -base64 32\``)
    } else if (name.endsWith('_URL')) {
      const reason = weakUrlPassword(text)
      if (reason) problems.push(`${name}: ${reason}`)
    }
  }
  for (const name of ['WEBHOOK_ALLOW_HTTP', 'WEBHOOK_ALLOW_PRIVATE']) {
    if (config[name] === true) problems.push(`${name}: must be false when NODE_ENV=production (it lets webhooks go to plain-http or private addresses; use NODE_ENV=development on a laptop)`)
  }
  return problems
}
