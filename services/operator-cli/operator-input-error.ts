/**
 * Bad operator input (a missing flag, an unknown business, an invalid card file). main()
 * prints the message alone on stderr and exits non-zero; nothing has been written.
 */
export class OperatorInputError extends Error {
  override name = 'OperatorInputError'
}
