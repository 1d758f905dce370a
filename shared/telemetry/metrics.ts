import { metrics, type Counter, type Histogram, type Meter } from '@opentelemetry/api'

// The instruments only, on the API alone: the SDK and the Prometheus exporter that serve them are
// in metrics-endpoint.ts, loaded by a service's start, so a CLI command that records a change
// (order:advance) does not load them.

export interface Instruments {
  meter: Meter
  quotes: Counter
  placements: Counter
  orders: Counter
  charged: Counter
  orderChanges: Counter
  refunds: Counter
  refunded: Counter
  jobDuration: Histogram
  dispatchOffers: Counter
  timeToAssign: Histogram
  locationUpdates: Counter
  webhookDeliveries: Counter
  webhookAttemptDuration: Histogram
}

// The SDK's default buckets suit milliseconds; these suit requests measured in seconds. 0.3 and 2
// are the quote and placement latency SLOs (DESIGN 15): an SLO's threshold must be a bucket's bound.
export const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.3, 0.5, 1, 2, 2.5, 5, 10, 30]
// Time to assign is minutes, not milliseconds; 120 s is its SLO (p90 under two minutes).
const ASSIGN_BUCKETS = [1, 2.5, 5, 10, 15, 30, 60, 120, 180, 300, 600, 1800]

let created: Instruments | null = null

/**
 * The project's instruments, made on first use: the metrics API has no proxy, so instruments
 * made before `startMetrics` (metrics-endpoint.ts) would stay no-ops for good.
 */
export function instruments(): Instruments {
  if (created) return created
  const meter = metrics.getMeter('courier')
  created = {
    meter,
    quotes: meter.createCounter('courier_quotes', { description: 'Quotes answered, by pricing model' }),
    placements: meter.createCounter('courier_placements', { description: 'Settled placements, by outcome' }),
    orders: meter.createCounter('courier_orders_placed', { description: 'Orders created' }),
    charged: meter.createCounter('courier_money_charged', { unit: '{currency_major_unit}', description: 'Money debited from wallets, by currency' }),
    orderChanges: meter.createCounter('courier_order_changes', { description: 'Order status changes, by event and by the statuses moved from and to' }),
    refunds: meter.createCounter('courier_refunds', { description: 'Cancellations that refunded money, by currency' }),
    refunded: meter.createCounter('courier_money_refunded', { unit: '{currency_major_unit}', description: 'Money refunded to wallets by cancellations, by currency' }),
    jobDuration: meter.createHistogram('courier_placement_job_duration_seconds', { description: 'Time a worker spent on one placement job, by outcome', advice: { explicitBucketBoundaries: SECONDS_BUCKETS } }),
    // DESIGN 14's dispatch metrics, in the `courier_` namespace of every other metric.
    dispatchOffers: meter.createCounter('courier_dispatch_offers', { description: 'Offers of orders to couriers, by outcome (offered, accepted, declined, expired, withdrawn, nobody)' }),
    timeToAssign: meter.createHistogram('courier_dispatch_time_to_assign_seconds', { description: 'From an order becoming created to a courier accepting it', advice: { explicitBucketBoundaries: ASSIGN_BUCKETS } }),
    locationUpdates: meter.createCounter('courier_location_updates', { description: 'Location pings accepted from couriers' }),
    webhookDeliveries: meter.createCounter('courier_webhook_attempts', { description: 'Webhook delivery attempts, by outcome (succeeded, retrying, failed)' }),
    webhookAttemptDuration: meter.createHistogram('courier_webhook_attempt_duration_seconds', { description: 'Time one webhook attempt took, from sending to the answer or the error, by outcome', advice: { explicitBucketBoundaries: SECONDS_BUCKETS } }),
  }
  return created
}
