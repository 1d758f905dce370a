import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api'
import { emptyResource } from '@opentelemetry/resources'
import { AggregationTemporality, DataPointType, type CollectionResult, type DataPoint, type Histogram, type MetricProducer } from '@opentelemetry/sdk-metrics'

/** One series: a route, method and status, and its cumulative buckets since the process started. */
interface Series {
  attributes: Attributes
  counts: number[]
  sum: number
  count: number
  min: number
  max: number
}

const hrTimeOf = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)]

/**
 * `http_server_request_duration_seconds`, the one instrument every request records, kept by
 * hand and read by the Prometheus exporter as a `MetricProducer`. The SDK's `record` sorts and
 * JSON-serialises the attributes on every call to find the series (its cost per quote is in
 * docs/performance.md); here a request is three map lookups and a bucket increment. The exposition is the SDK's own: the
 * exporter serialises these points as it does its instruments'.
 */
export class RequestDurations implements MetricProducer {
  readonly #routes = new Map<string, Map<string, Map<number, Series>>>()
  readonly #start = hrTimeOf(Date.now())

  constructor(
    private readonly name: string,
    private readonly description: string,
    /** Upper bounds of the buckets, ascending, in seconds; one more bucket counts what is above. */
    private readonly boundaries: readonly number[],
  ) {}

  record(seconds: number, method: string, route: string, status: number): void {
    const series = this.#series(method, route, status)
    let bucket = 0
    while (bucket < this.boundaries.length && seconds > this.boundaries[bucket]!) bucket++
    series.counts[bucket]!++
    series.sum += seconds
    series.count++
    if (seconds < series.min) series.min = seconds
    if (seconds > series.max) series.max = seconds
  }

  #series(method: string, route: string, status: number): Series {
    let methods = this.#routes.get(route)
    if (!methods) this.#routes.set(route, (methods = new Map()))
    let statuses = methods.get(method)
    if (!statuses) methods.set(method, (statuses = new Map()))
    let series = statuses.get(status)
    if (!series) {
      const attributes = { 'http.request.method': method, 'http.route': route, 'http.response.status_code': status }
      series = { attributes, counts: new Array<number>(this.boundaries.length + 1).fill(0), sum: 0, count: 0, min: Infinity, max: -Infinity }
      statuses.set(status, series)
    }
    return series
  }

  async collect(): Promise<CollectionResult> {
    const now = hrTimeOf(Date.now())
    // One copy of the bounds for every point of this scrape: the exporter only reads them.
    const boundaries = [...this.boundaries]
    const dataPoints: DataPoint<Histogram>[] = []
    for (const methods of this.#routes.values()) {
      for (const statuses of methods.values()) {
        for (const series of statuses.values()) {
          dataPoints.push({
            attributes: series.attributes,
            startTime: this.#start,
            endTime: now,
            value: { buckets: { boundaries, counts: [...series.counts] }, sum: series.sum, count: series.count, min: series.min, max: series.max },
          })
        }
      }
    }
    return {
      resourceMetrics: {
        // The reader keeps its provider's resource; this one is never shown.
        resource: emptyResource(),
        scopeMetrics: [{
          scope: { name: 'courier' },
          metrics: [{
            descriptor: { name: this.name, description: this.description, unit: '', valueType: ValueType.DOUBLE },
            aggregationTemporality: AggregationTemporality.CUMULATIVE,
            dataPointType: DataPointType.HISTOGRAM,
            dataPoints,
          }],
        }],
      },
      errors: [],
    }
  }
}
