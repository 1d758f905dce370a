import t from 'tap'
import { serviceFromEntry } from '../../../shared/telemetry/sdk.js'

// Traces and metrics name a service alike (docs/configuration.md, OTEL_SERVICE_NAME), so one
// service's spans and series meet in the same place.
t.test('traces name each service as its metrics do', async (t) => {
  t.equal(serviceFromEntry('/app/dist/services/placement-worker/main.js'), 'courier-worker')
  t.equal(serviceFromEntry('/app/dist/services/webhook-sender/main.js'), 'courier-webhook-sender')
  t.equal(serviceFromEntry('C:\\app\\dist\\services\\gateway\\main.js'), 'courier-gateway')
  t.equal(serviceFromEntry('/usr/bin/something'), 'courier-service')
})
