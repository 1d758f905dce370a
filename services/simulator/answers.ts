import { z } from 'zod'

// The parts of the courier API's answers a rider reads (docs/api-guide.md, "Couriers"). An answer
// without them breaks the contract: the rider logs it and carries on instead of acting on a guess.

const point = z.object({ latitude: z.number(), longitude: z.number() })

/** An offer, as the stream's `offer` event and each row of `GET /offers` carry it. */
export const offerNotice = z.object({ offer_id: z.string(), order_id: z.string() })
export type OfferNotice = z.infer<typeof offerNotice>

export const offerList = z.object({ data: z.array(offerNotice) })

/** The order an accepted offer hands over: where to ride to, then where to take it. */
export const acceptedOrder = z.object({ pickup: point, dropoff: point })

/** `GET /orders`: what the rider still holds from a run that stopped mid-delivery, and how far each got. */
export const heldOrders = z.object({ data: z.array(acceptedOrder.extend({ order_id: z.string(), status: z.enum(['assigned', 'picked_up', 'failed']) })) })

/** The stream's `order_cancelled` event. */
export const orderNotice = z.object({ order_id: z.string() })

const refusal = z.object({ message: z.string() })

/** The spec's error message of a refusal, or '' when the body is not one. */
export function refusalMessage(body: unknown): string {
  const parsed = refusal.safeParse(body)
  return parsed.success ? parsed.data.message : ''
}
