import { closeSync, openSync, readSync } from 'node:fs'
import path from 'node:path'
import { importRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { RateCardFileError } from '../../../shared/errors/rate-card-file-error.js'
import { RATE_CARD_FILE_MAX_BYTES } from '../../../shared/pricing/rate-card-file.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'
import { errorCode, errorMessage } from '../../../shared/errors/error-message.js'

/**
 * `ratecard:import`: a known card name becomes its next version with new option ids, and
 * every business that has the card enabled prices with it at once.
 */
export const ratecardImport = defineCommand({
  options: {
    file: { type: 'string' },
  },
  prepare(flags) {
    const typed = requiredText(flags, 'file', 4096)
    // `npm run` starts the CLI in the project's root; a relative path means where the operator typed
    // the command, which npm keeps in INIT_CWD (unset when the CLI is started without npm).
    const file = path.resolve(process.env.INIT_CWD || process.cwd(), typed)
    // The console's limit: of a file of a gigabyte (a wrong path, a log, a pipe) no more is read.
    const bytes = readable(file, () => readAtMost(file, RATE_CARD_FILE_MAX_BYTES + 1))
    if (bytes.length > RATE_CARD_FILE_MAX_BYTES) throw new OperatorInputError(`${typed} is over 2 MiB (${RATE_CARD_FILE_MAX_BYTES} bytes), the most a rate-card file may be`)
    // Problems are reported at the path as typed: relative to where the operator is, as an editor opens it.
    return { path: typed, text: bytes.toString('utf8') }
  },
  async run({ sql, config, announce, actor }, input) {
    let imported
    try {
      imported = await importRateCardAs(sql, actor, input.text, config.CURRENCY)
    } catch (err) {
      if (err instanceof RateCardFileError) throw new OperatorInputError(refusal(input.path, err))
      throw err
    }
    await announce({ kind: 'rate-card', rateCardId: imported.rate_card_id })
    return {
      rate_card_id: imported.rate_card_id,
      version: imported.version,
      options: imported.options.map((option) => ({ id: option.id, vehicle_type: option.vehicle_type, label: option.label })),
    }
  },
})

/** The file's first `max` bytes, or all of it if shorter: a pipe or `/dev/stdin` as well as a file. */
function readAtMost(path: string, max: number): Buffer {
  const buffer = Buffer.alloc(max)
  const fd = openSync(path, 'r')
  try {
    let length = 0
    for (let read = -1; read !== 0 && length < max; length += read) read = readSync(fd, buffer, length, max - length, null)
    return buffer.subarray(0, length)
  } finally {
    closeSync(fd)
  }
}

function readable<T>(file: string, read: () => T): T {
  try {
    return read()
  } catch (err) {
    if (errorCode(err) === 'ENOENT') throw new OperatorInputError(`no file at ${file}`)
    throw new OperatorInputError(`cannot read ${file}: ${errorMessage(err)}`)
  }
}

// One line per problem, `file:line:column: message` as compilers write them, so an editor or a
// terminal can jump to each.
function refusal(path: string, err: RateCardFileError): string {
  const lines = err.problems.map((problem) => `${path}${problem.at ? `:${problem.at.line}:${problem.at.column}` : ''}: ${problem.message}`)
  if (err.unlisted > 0) lines.push(`${path}: and ${err.unlisted} more problem${err.unlisted === 1 ? '' : 's'}`)
  return lines.join('\n')
}
