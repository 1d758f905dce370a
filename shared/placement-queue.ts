import type { JobsOptions } from 'bullmq'

export const PLACEMENT_QUEUE = 'placement'

/**
 * The job a placement becomes; its `jobId` is the placement id. Ids only: the shipments, with
 * their names, phones and addresses, stay on the placement row in Postgres.
 */
export interface PlacementJob {
  placement_id: string
  business_id: string
}

/**
 * Retries cover faults only (a domain failure is a stored outcome). The outcome lives in
 * Postgres, so a completed job leaves Redis at once; a failed one stays an hour at most, for
 * the settler and for whoever looks into why.
 */
export const placementJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: { age: 3600, count: 1000 },
}
