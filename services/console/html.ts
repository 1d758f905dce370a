// Pages are TypeScript functions returning `html` templates: the compiler checks every page,
// values are escaped unless they are themselves `Html`, and nothing needs a build step of its own.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char])
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/** Interpolations are escaped; arrays are joined; `null`, `undefined` and `false` render nothing. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0]
  values.forEach((value, index) => {
    text += render(value) + strings[index + 1]
  })
  return new Html(text)
}
