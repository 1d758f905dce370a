import { z } from 'zod'

// The parts of the courier API's answers a rider reads (docs/api-guide.md, "Couriers"). An answer
// without them breaks the contract: the rider logs it and carries on instead of acting on a guess.

const point = z.object({ latitude: z.number(), longitude: z.number() })

/** An offer, as the stream's `offer` event and each row of `GET /offers` carry it. */
export const offerNotice = z.object({ offer_id: z.string(), order_id: z.string() })
export type OfferNotice = z.infer<typeof offerNotice>

export const offerList = z.object({ data: z.array(offerNotice) })

/** What the door needs: the recipient's PIN, a photo, both or neither. */
const proof = z.object({ pin_required: z.boolean(), photo_required: z.boolean() })
export type Proof = z.infer<typeof proof>

/** The order an accepted offer hands over: where to ride to, then where to take it, and what the door needs. */
export const acceptedOrder = z.object({ pickup: point, dropoff: point, proof })

/** `GET /orders/{id}`: an order the rider holds, and how far it got. */
export const heldOrder = acceptedOrder.extend({ order_id: z.string(), status: z.enum(['assigned', 'picked_up', 'failed']) })
export type HeldOrder = z.infer<typeof heldOrder>

/** `GET /orders`: what the rider still holds from a run that stopped mid-delivery. */
export const heldOrders = z.object({ data: z.array(heldOrder) })

/** `GET /me`: where the courier was last heard from, if anywhere. */
export const lastHeard = z.object({ location: point.nullable() })

/** The stream's `order_cancelled` and `order_unassigned` events. */
export const orderNotice = z.object({ order_id: z.string() })

const refusal = z.object({ message: z.string() })
const fieldRefusal = z.object({ errors: z.array(z.object({ field: z.string().optional() })) })

/** Whether a refusal names `field` among its errors (a 400 about the PIN names `pin`), by the body's structure, not its words. */
export function refusesField(body: unknown, field: string): boolean {
  const parsed = fieldRefusal.safeParse(body)
  return parsed.success && parsed.data.errors.some((error) => error.field === field)
}

/** The spec's error message of a refusal, or '' when the body is not one. */
export function refusalMessage(body: unknown): string {
  const parsed = refusal.safeParse(body)
  return parsed.success ? parsed.data.message : ''
}
