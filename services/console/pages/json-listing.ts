import type { RateCardFileError, RateCardProblem } from '../../../shared/errors/rate-card-file-error.js'
import { html, type Html } from '../html.js'

// Lines shown either side of a problem's line, and the most of one line shown: whatever the
// file's size, the page holds at most (2 × CONTEXT + 1) short lines per listed problem.
const CONTEXT = 2
const WIDTH = 160

/**
 * Why a rate-card file was refused: every listed problem at its line and column in the file
 * as uploaded, then the lines around each, numbered as in the file, with the problem under its
 * line, so the operator finds each in their own editor.
 */
export function rateCardRefusal(text: string, err: RateCardFileError): Html {
  const total = err.problems.length + err.unlisted
  return html`<div role="alert" class="flash error"><p>Nothing was imported: the file has ${total} problem${total === 1 ? '' : 's'}, each shown where it is.</p>
<ol class="problems">${err.problems.map((problem) => html`<li>${problem.at ? `line ${problem.at.line}, column ${problem.at.column}: ` : ''}${problem.message}</li>`)}</ol>
${err.unlisted > 0 ? html`<p>And ${err.unlisted} more problem${err.unlisted === 1 ? '' : 's'}, not listed: fix these and import the file again.</p>` : ''}</div>${fileWithProblems(text, err.problems)}`
}

/** The lines of `text` around each located problem, numbered as in the file, each problem under its line. */
function fileWithProblems(text: string, problems: RateCardProblem[]): Html {
  const placed = new Map<number, RateCardProblem[]>()
  for (const problem of problems) {
    if (problem.at) placed.set(problem.at.line, [...(placed.get(problem.at.line) ?? []), problem])
  }
  const shown = [...placed.keys()].sort((a, b) => a - b).flatMap((line) => Array.from({ length: 2 * CONTEXT + 1 }, (_, step) => line - CONTEXT + step)).filter((line) => line >= 1)
  const lines = linesOf(text, [...new Set(shown)])
  const runs: number[][] = []
  for (const line of lines.keys()) {
    const run = runs.at(-1)
    if (run && run.at(-1) === line - 1) run.push(line)
    else runs.push([line])
  }
  return html`${runs.map((run) => html`<ol class="listing" start="${run[0]}" aria-label="Lines ${run[0]} to ${run.at(-1)} of the file">${run.map((line) => {
    const full = lines.get(line) ?? ''
    const here = placed.get(line)
    if (!here) return html`<li><code>${clip(full, 1)}</code></li>`
    // A line too long to show whole (a minified file) is shown once per problem, around it.
    const shown = full.length <= WIDTH ? [here] : here.map((problem) => [problem])
    return shown.map((problems, index) => html`<li${index > 0 ? html` value="${line}"` : ''} class="problem"><code>${clip(full, problems[0].at?.column ?? 1)}</code>${problems.map((problem) => html`<p class="error" role="note">⚠ ${problem.message}</p>`)}</li>`)
  })}</ol>`)}`
}

/** At most WIDTH characters of `line`, from a little before `column` when it is longer. */
function clip(line: string, column: number): string {
  if (line.length <= WIDTH) return line
  const from = Math.max(0, Math.min(column - 1 - WIDTH / 4, line.length - WIDTH))
  return `${from > 0 ? '…' : ''}${line.slice(from, from + WIDTH)}${line.length > from + WIDTH ? '…' : ''}`
}

/** The text of the given lines (1-based, ascending), found in one pass; a number past the last line is left out. */
function linesOf(text: string, numbers: number[]): Map<number, string> {
  const found = new Map<number, string>()
  let line = 1
  let start = 0
  for (const wanted of numbers) {
    for (; line < wanted && start <= text.length; line++) {
      const end = text.indexOf('\n', start)
      start = end === -1 ? text.length + 1 : end + 1
    }
    if (start > text.length) break
    const end = text.indexOf('\n', start)
    found.set(wanted, text.slice(start, end === -1 ? text.length : end).replace(/\r$/, ''))
  }
  return found
}
