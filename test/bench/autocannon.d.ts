// autocannon ships no types; the bench uses only this much of it.
declare module 'autocannon' {
  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p97_5: number
    p99: number
  }
  export interface Result {
    requests: Histogram
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    duration: number
    statusCodeStats: Record<string, { count: number }>
  }
  export interface Options {
    url: string
    connections?: number
    duration?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    timeout?: number
    pipelining?: number
    /** Called once per connection: sets that connection's own headers. */
    setupClient?: (client: { setHeaders(headers: Record<string, string>): void }) => void
    /** Requests in turn; `setupRequest` may change each one before it is sent. */
    requests?: { setupRequest?: (request: { headers?: Record<string, string> }) => { headers?: Record<string, string> } }[]
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
