/** The spec's error body. Extra fields (`errors`, `request_id`, …) follow the four it names. */
export function errorBody(statusCode: number, path: string, message: string, extra: Record<string, unknown> = {}) {
  return {
    statusCode,
    timestamp: new Date().toISOString(),
    path: path.split('?')[0],
    message,
    ...extra,
  }
}
