import { readFileSync } from 'node:fs'
import { demoRateCardPath } from '../../shared/accounts/demo-seed.js'
import type { SourcePosition } from '../../shared/json-source.js'

/** The demo card's file as it is written (a zone or a price per line), not as JSON.stringify would write it. */
export function demoCardText(): string {
  return readFileSync(demoRateCardPath, 'utf8')
}

/** `text` with each `[from, to]` made; each `from` must occur once, so a test cannot spoil the wrong part. */
export function spoiled(text: string, changes: [string, string][]): string {
  return changes.reduce((spoilt, [from, to]) => spoilt.slice(0, onlyIndexOf(spoilt, from)) + to + spoilt.slice(onlyIndexOf(spoilt, from) + from.length), text)
}

/** Where `needle`, which must occur once, starts in `text`, as an editor shows it. */
export function positionOf(text: string, needle: string): SourcePosition {
  const index = onlyIndexOf(text, needle)
  return { line: text.slice(0, index).split('\n').length, column: index - text.lastIndexOf('\n', index - 1) }
}

function onlyIndexOf(text: string, needle: string): number {
  const index = text.indexOf(needle)
  if (index === -1 || text.indexOf(needle, index + 1) !== -1) throw new Error(`${JSON.stringify(needle)} must occur exactly once`)
  return index
}
