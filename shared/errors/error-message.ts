/** What a thrown value says, for a log line or a one-line refusal: an Error's message, or the value itself as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
