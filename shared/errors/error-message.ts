/** What a thrown value says, for a log line or a one-line refusal: an Error's message, or the value itself as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** The `code` a thrown Error carries (a system error's `EADDRINUSE`, Postgres's SQLSTATE, fastify's `FST_…`), or undefined. */
export function errorCode(err: unknown): unknown {
  return err instanceof Error && 'code' in err ? err.code : undefined
}
