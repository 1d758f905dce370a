import { errorMessage } from '../../shared/errors/error-message.js'

/**
 * The database would not serve the command: refused, reset, or silent past its connect timeout
 * (a port that is not Postgres). main() prints the message alone, naming where (host, port,
 * database) and never the credentials, and exits non-zero.
 */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError'

  constructor(where: string, cause: unknown) {
    super(`database unreachable at ${where}: ${errorMessage(cause)}`, { cause })
  }
}
