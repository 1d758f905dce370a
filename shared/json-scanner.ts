// The tokens of a JSON text, for reading it where `JSON.parse` gives no places: which part is
// where, and where the syntax breaks.

export type JsonToken = '{' | '}' | '[' | ']' | ':' | ',' | 'string' | 'literal' | 'end' | 'bad'

const PUNCTUATION: Record<string, JsonToken | undefined> = { '{': '{', '}': '}', '[': '[', ']': ']', ':': ':', ',': ',' }
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const LITERAL = /true|false|null/y
// What a string may hold as it is; the scanner stops only at a quote, a backslash or a control character.
const PLAIN = /[^"\\\u0000-\u001f]*/y
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y
const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09

/**
 * Strict JSON (RFC 8259) cut into tokens, one `next()` at a time, each token's place kept as
 * offsets into the text; a character JSON does not allow is a `bad` token saying why.
 */
export class JsonScanner {
  /** Where the last token starts and ends (exclusive); for `bad`, where the text stops being JSON. */
  start = 0
  end = 0
  /** Why the last token is `bad`. */
  problem = ''

  constructor(readonly text: string) {}

  next(): JsonToken {
    const { text } = this
    let at = this.end
    while (at < text.length && isSpace(text.charCodeAt(at))) at++
    this.start = at
    this.end = at + 1
    if (at === text.length) {
      this.end = at
      return 'end'
    }
    const char = text[at]
    const punctuation = PUNCTUATION[char]
    if (punctuation) return punctuation
    if (char === '"') return this.string()
    for (const pattern of [NUMBER, LITERAL]) {
      pattern.lastIndex = at
      if (pattern.test(text)) {
        this.end = pattern.lastIndex
        return 'literal'
      }
    }
    return this.bad(at, `unexpected character ${characterAt(text, at)}`)
  }

  /** The value of the string token just read. */
  stringValue(): string {
    const raw = this.text.slice(this.start, this.end)
    if (!raw.includes('\\')) return raw.slice(1, -1)
    const value: unknown = JSON.parse(raw)
    return typeof value === 'string' ? value : raw
  }

  /**
   * Reads on to the end of the object or array just opened, by its brackets alone: only for a
   * text known to be JSON, whose strings need no checking, only stepping over.
   */
  skipContainer(): void {
    const { text } = this
    let depth = 1
    let at = this.end
    while (depth > 0 && at < text.length) {
      const code = text.charCodeAt(at++)
      if (code === 0x22) at = closingQuote(text, at) + 1
      else if (code === 0x5b || code === 0x7b) depth++
      else if (code === 0x5d || code === 0x7d) depth--
    }
    this.end = at
  }

  private string(): JsonToken {
    const { text } = this
    for (let at = this.start + 1; ;) {
      PLAIN.lastIndex = at
      PLAIN.test(text)
      at = PLAIN.lastIndex
      if (at === text.length) return this.bad(this.start, 'a string is not closed')
      const char = text[at]
      if (char === '"') {
        this.end = at + 1
        return 'string'
      }
      if (char === '\n' || char === '\r') return this.bad(at, 'a line break inside a string (is its closing quote missing?)')
      if (char !== '\\') return this.bad(at, `${characterAt(text, at)} inside a string must be written as an escape`)
      ESCAPE.lastIndex = at
      if (!ESCAPE.test(text)) return this.bad(at, `invalid escape ${JSON.stringify(text.slice(at, at + (text[at + 1] === 'u' ? 6 : 2)))} in a string`)
      at = ESCAPE.lastIndex
    }
  }

  private bad(at: number, problem: string): JsonToken {
    this.start = at
    this.problem = problem
    return 'bad'
  }
}

/** The quote that ends the string going on at `from` in a JSON text: the first one not escaped. */
function closingQuote(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote
  }
  return text.length
}

/** `'x'`, or `U+FEFF` for a character that would not show. */
function characterAt(text: string, at: number): string {
  const code = text.codePointAt(at) ?? 0
  if (code === 0x27) return `"'"`
  return code > 0x20 && code < 0x7f ? `'${text[at]}'` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
}
