// JSON text as someone wrote it, so that a refusal can point into it: where a part starts and
// where the syntax breaks. Read token by token in a loop (`json-scanner.ts`): a deeply nested
// text costs a longer loop, never the call stack.

import { JsonScanner } from './json-scanner.js'

/** A place in a text as an editor shows it: 1-based line and column (UTF-16 code units). */
export interface SourcePosition {
  line: number
  column: number
}

/** `zones[1].polygon` from `['zones', 1, 'polygon']`: the notation a problem's path is written in. */
export function pathOf(parts: readonly PropertyKey[]): string {
  return parts.reduce<string>(childOf, '')
}

function childOf(path: string, part: PropertyKey): string {
  if (typeof part === 'number') return `${path}[${part}]`
  return path ? `${path}.${String(part)}` : String(part)
}

/**
 * The path one level up: `zones[1].polygon` → `zones[1]` → `zones` → `` (the whole text). Every
 * step is shorter, so a walk up from any path, even one the text does not have, ends.
 */
export function parentOf(path: string): string {
  const last = /(\.[^.[\]]+|\[\d+\])$/.exec(path)
  return last ? path.slice(0, last.index) : ''
}

/** Why `text` is not JSON and where it stops being JSON; null when it is JSON. */
export function jsonSyntaxError(text: string): { message: string; at: SourcePosition } | null {
  const problem = syntaxProblem(new JsonScanner(text))
  return problem && { message: problem.message, at: positionsOf(text, [problem.offset]).get(problem.offset) ?? { line: 1, column: 1 } }
}

/**
 * Where each path starts in `text`, which must be JSON: a member at its name, an element at its
 * value. A path the text lacks (a missing member) gets the place of its nearest enclosing part.
 * One pass over the text whatever the number of paths, stepping over every part no path leads
 * into; where a name repeats, the last one counts, as in `JSON.parse`.
 */
export function locatePaths(text: string, paths: readonly string[]): Map<string, SourcePosition> {
  const root: Part = { path: '', up: null, offset: -1, parts: new Map() }
  const partAt = (path: string): Part => {
    if (path === '') return root
    const up = partAt(parentOf(path))
    const step = path.slice(up.path.length)
    const key = step.startsWith('[') ? Number(step.slice(1, -1)) : step.replace(/^\./, '')
    const known = up.parts.get(key)
    if (known) return known
    const part: Part = { path, up, offset: -1, parts: new Map() }
    up.parts.set(key, part)
    return part
  }
  const wanted = paths.map(partAt)
  walk(new JsonScanner(text), root)
  const offsetOf = (part: Part): number => {
    let found: Part | null = part
    while (found && found.offset < 0) found = found.up
    return found?.offset ?? 0
  }
  const offsets = wanted.map(offsetOf)
  const positions = positionsOf(text, offsets)
  return new Map(wanted.map((part, index) => [part.path, positions.get(offsets[index]!) ?? { line: 1, column: 1 }]))
}

/** A part some path leads to or through: its members by name, its elements by index. */
interface Part {
  path: string
  up: Part | null
  /** Where it starts in the text; -1 until found. */
  offset: number
  parts: Map<string | number, Part>
}

function walk(scanner: JsonScanner, root: Part): void {
  const open: { part: Part; array: boolean; count: number }[] = []
  let member: { part: Part | undefined; offset: number } | null = null
  for (let token = scanner.next(); token !== 'end' && token !== 'bad'; token = scanner.next()) {
    if (token === '}' || token === ']') open.pop()
    if (token === '}' || token === ']' || token === ',' || token === ':') continue
    const container = open.at(-1)
    if (container && !container.array && member === null) {
      member = { part: container.part.parts.get(scanner.stringValue()), offset: scanner.start }
      continue
    }
    const part = !container ? root : member ? member.part : container.part.parts.get(container.count++)
    if (part) part.offset = member?.offset ?? scanner.start
    member = null
    if (token === '{' || token === '[') {
      if (part && part.parts.size > 0) open.push({ part, array: token === '[', count: 0 })
      else scanner.skipContainer()
    }
  }
}

type Expected = 'value' | 'value or ]' | 'name' | 'name or }' | ':' | 'next'

/** The first place where the scanner's text breaks the JSON grammar, and why. */
function syntaxProblem(scanner: JsonScanner): { message: string; offset: number } | null {
  const closers: ('}' | ']')[] = []
  let expected: Expected = 'value'
  let comma = -1
  for (;;) {
    const token = scanner.next()
    if (token === 'bad') return { message: scanner.problem, offset: scanner.start }
    const closer = closers.at(-1)
    const refuse = (message: string) => ({ message, offset: scanner.start })
    const found = () => (token === 'end' ? 'the end of the file' : `'${clipped(scanner.text.slice(scanner.start, scanner.end))}'`)
    if (token === 'end' && closer) return refuse(`the file ends before ${closer === '}' ? 'an object' : 'an array'} is closed: a '${closer}' is missing`)
    if (token === closer && comma >= 0) return { message: `a comma before '${closer}' is not allowed`, offset: comma }
    comma = token === ',' ? scanner.start : -1
    if (token === closer && (expected === 'next' || expected === `name or ${closer}` || expected === `value or ${closer}`)) {
      closers.pop()
      expected = 'next'
      continue
    }
    if (expected === 'next') {
      if (token === 'end' && !closer) return null
      if (token !== ',' || !closer) return refuse(closer ? `expected ',' or '${closer}', found ${found()}` : `the file goes on after its JSON value ends: found ${found()}`)
      expected = closer === '}' ? 'name' : 'value'
    } else if (expected === ':') {
      if (token !== ':') return refuse(`expected ':' after a member's name, found ${found()}`)
      expected = 'value'
    } else if (expected === 'name' || expected === 'name or }') {
      if (token !== 'string') return refuse(`expected a member's name in double quotes, found ${found()}`)
      expected = ':'
    } else if (token === '{' || token === '[') {
      closers.push(token === '{' ? '}' : ']')
      expected = token === '{' ? 'name or }' : 'value or ]'
    } else if (token === 'string' || token === 'literal') {
      expected = 'next'
    } else {
      return refuse(`expected a value, found ${found()}`)
    }
  }
}

function clipped(token: string): string {
  return token.length > 24 ? `${token.slice(0, 24)}…` : token
}

/** Line and column of each offset, in one pass over the text. */
function positionsOf(text: string, offsets: readonly number[]): Map<number, SourcePosition> {
  const positions = new Map<number, SourcePosition>()
  let line = 1
  let lineStart = 0
  for (const offset of [...new Set(offsets)].sort((a, b) => a - b)) {
    for (let lineEnd = text.indexOf('\n', lineStart); lineEnd !== -1 && lineEnd < offset; lineEnd = text.indexOf('\n', lineStart)) {
      line++
      lineStart = lineEnd + 1
    }
    positions.set(offset, { line, column: offset - lineStart + 1 })
  }
  return positions
}
