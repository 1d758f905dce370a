import type { RateCardProblem } from '../../../shared/errors/rate-card-file-error.js'
import { parentOf } from '../../../shared/json-source.js'
import { html, type Html } from '../html.js'

interface Line {
  text: string
  path: string
}

const scalar = (item: unknown) => item === null || typeof item !== 'object'

/** A list of numbers or of lists of them (a polygon), or an object of plain values (a price): one line each. */
function isFlat(value: unknown): boolean {
  if (Array.isArray(value)) return value.every((item) => scalar(item) || (Array.isArray(item) && item.every(scalar)))
  return value !== null && typeof value === 'object' && Object.values(value).every(scalar)
}

/**
 * Pretty-prints JSON one value per line (a polygon or a price on one), each line
 * knowing the path it starts (`zones[1].polygon`).
 */
function linesOf(value: unknown, path: string, indent: string, prefix: string, suffix: string, out: Line[]): void {
  const open = (bracket: string) => out.push({ text: `${indent}${prefix}${bracket}`, path })
  if (isFlat(value)) {
    out.push({ text: `${indent}${prefix}${JSON.stringify(value)}${suffix}`, path })
  } else if (Array.isArray(value) && value.length > 0) {
    open('[')
    value.forEach((item, index) => linesOf(item, `${path}[${index}]`, `${indent}  `, '', index < value.length - 1 ? ',' : '', out))
    out.push({ text: `${indent}]${suffix}`, path })
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
    open('{')
    const entries = Object.entries(value)
    entries.forEach(([key, item], index) => linesOf(item, path ? `${path}.${key}` : key, `${indent}  `, `${JSON.stringify(key)}: `, index < entries.length - 1 ? ',' : '', out))
    out.push({ text: `${indent}}${suffix}`, path })
  } else {
    out.push({ text: `${indent}${prefix}${JSON.stringify(value)}${suffix}`, path })
  }
}

/**
 * The file as it was sent, with each problem under the first line of the part it names (the
 * nearest enclosing part when that one is missing), so the operator sees where to fix it.
 */
export function fileWithProblems(file: unknown, problems: RateCardProblem[]): Html {
  const lines: Line[] = []
  linesOf(file, '', '', '', '', lines)
  const placed = new Map<number, RateCardProblem[]>()
  for (const problem of problems) {
    let at = -1
    for (let path = problem.path; at === -1; path = parentOf(path)) {
      at = lines.findIndex((line) => line.path === path)
      if (path === '') break
    }
    const index = Math.max(0, at)
    placed.set(index, [...(placed.get(index) ?? []), problem])
  }
  return html`<ol class="listing" aria-label="The file with its problems">${lines.map((line, index) => {
    const here = placed.get(index)
    return html`<li${here ? html` class="problem"` : ''}><code>${line.text}</code>${here ? here.map((problem) => html`<p class="error" role="note">⚠ ${problem.message}</p>`) : ''}</li>`
  })}</ol>`
}
