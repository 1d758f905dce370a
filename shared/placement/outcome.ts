import { z } from 'zod'

const kobo = z.number().int().nonnegative()

/**
 * How a placement ended: the one value the worker stores on the placement row, the gateway
 * reads back and maps to HTTP (services/gateway/placement-answer.ts). Amounts are in kobo.
 * `not_processed` is the one fault that is stored: the placement never ran and never will, so
 * nothing was charged and its Idempotency-Key is free again (docs/contracts.md).
 */
export const placementOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('placed'),
    currency: z.string(),
    chargedTotal: kobo,
    orders: z.array(z.object({ orderId: z.string(), price: kobo })),
  }),
  z.object({
    kind: z.literal('unpriceable'),
    errors: z.array(z.object({ index: z.number().int().nonnegative(), message: z.string() })),
  }),
  z.object({
    kind: z.literal('insufficient_balance'),
    currency: z.string(),
    required: kobo,
    available: kobo,
  }),
  z.object({ kind: z.literal('not_processed') }),
])

export type PlacementOutcome = z.infer<typeof placementOutcomeSchema>
export type PlacementOutcomeKind = PlacementOutcome['kind']

export const NOT_PROCESSED: PlacementOutcome = { kind: 'not_processed' }
