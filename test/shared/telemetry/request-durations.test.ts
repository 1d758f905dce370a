import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import t from 'tap'
import { RequestDurations } from '../../../shared/telemetry/request-durations.js'

/** What Prometheus would scrape: the durations read by an exporter beside an SDK provider, as `startMetrics` wires them. */
async function exposition(durations: RequestDurations): Promise<string> {
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [durations] })
  const provider = new MeterProvider({ readers: [exporter] })
  const { resourceMetrics, errors } = await exporter.collect()
  await provider.shutdown()
  if (errors.length > 0) throw errors[0]
  return new PrometheusSerializer().serialize(resourceMetrics)
}

t.test('a series per route, method and status, in cumulative buckets', async (t) => {
  const durations = new RequestDurations('http_server_request_duration_seconds', 'HTTP requests', [0.01, 0.1, 1])
  durations.record(0.004, 'POST', '/v2/business/order/cost', 200)
  durations.record(0.01, 'POST', '/v2/business/order/cost', 200)
  durations.record(0.5, 'POST', '/v2/business/order/cost', 200)
  durations.record(3, 'POST', '/v2/business/order/cost', 200)
  durations.record(0.02, 'POST', '/v2/business/order/cost', 400)
  durations.record(0.001, 'GET', 'unmatched', 404)
  const text = await exposition(durations)
  // The labels an SDK instrument of the meter `courier` gets, scope included.
  const cost200 = 'http_request_method="POST",http_route="/v2/business/order/cost",http_response_status_code="200",otel_scope_name="courier"'
  t.match(text, '# TYPE http_server_request_duration_seconds histogram')
  // A value on a bound counts in that bound's bucket; Prometheus's buckets are cumulative.
  for (const [le, count] of [['0.01', 2], ['0.1', 2], ['1', 3], ['+Inf', 4]] as const) {
    t.ok(text.includes(`http_server_request_duration_seconds_bucket{${cost200},le="${le}"} ${count}`), `le=${le}: ${count}`)
  }
  t.ok(text.includes(`http_server_request_duration_seconds_count{${cost200}} 4`), 'the count')
  t.ok(text.includes(`http_server_request_duration_seconds_sum{${cost200}} 3.514`), 'the sum')
  t.ok(text.includes('http_server_request_duration_seconds_count{http_request_method="POST",http_route="/v2/business/order/cost",http_response_status_code="400",otel_scope_name="courier"} 1'), 'another status is its own series')
  t.ok(text.includes('http_server_request_duration_seconds_count{http_request_method="GET",http_route="unmatched",http_response_status_code="404",otel_scope_name="courier"} 1'), 'so is another route and method')
})

t.test('nothing recorded yet: no series, and the exposition still serialises', async (t) => {
  const text = await exposition(new RequestDurations('idle_seconds', 'nothing yet', [1]))
  t.notOk(text.includes('idle_seconds_count'), 'no series before a request')
})
