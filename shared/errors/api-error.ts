/**
 * An error that already knows its HTTP answer. Whatever raises it, the gateway's one error
 * handler turns it into the spec's body `{statusCode, timestamp, path, message}` plus `extra`.
 */
export class ApiError extends Error {
  override name = 'ApiError'

  constructor(
    readonly statusCode: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
  }
}
