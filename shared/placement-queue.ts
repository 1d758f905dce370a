import type { JobsOptions } from 'bullmq'
import type { Shipment } from './schemas/shipment.js'

export const PLACEMENT_QUEUE = 'placement'

/** The job a placement becomes; its `jobId` is the placement id. */
export interface PlacementJob {
  placementId: string
  businessId: string
  shipments: Shipment[]
}

/**
 * Retries cover faults only (a domain failure is a returned outcome). Finished jobs leave
 * Redis on a bounded policy: the outcome lives in Postgres, so nothing is lost.
 */
export const placementJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 5000 },
  removeOnFail: { age: 24 * 3600, count: 5000 },
}
