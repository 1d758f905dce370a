import type { Quote } from '../courier.js'
import type { Shipment } from '../schemas/shipment.js'
import type { Tx } from './sql.js'

export interface NewOrder {
  id: string
  position: number
  quote: Quote
  shipment: Shipment
}

/** Inserts a placement's orders in one statement, whatever their number. */
export async function insertOrders(tx: Tx, placementId: string, businessId: string, orders: NewOrder[]): Promise<void> {
  const rows = orders.map((order) => ({
    id: order.id,
    placement_id: placementId,
    business_id: businessId,
    position: order.position,
    price: order.quote.price,
    currency: order.quote.currency,
    pricing_model: order.quote.pricingModel,
    option_id: order.quote.optionId,
    delivery_mode: order.quote.deliveryMode,
    distance_km: order.quote.distanceKm,
    shipment: order.shipment as unknown as string,
  }))
  await tx`insert into orders ${tx(rows)}`
}
