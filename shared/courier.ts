// The courier's own words, shared by every layer: where (a point on the map), with what
// (the vehicle a business asks for) and how that vehicle is shown on a quote (the delivery mode).
// A leaf: it imports nothing of ours, so anything may import it without an arrow pointing up.

export const VEHICLE_TYPES = ['bike', 'bus_van', 'truck'] as const
export type VehicleType = (typeof VEHICLE_TYPES)[number]

export type DeliveryMode = 'MOTORBIKE' | 'BUS_VAN' | 'TRUCK'
export const DELIVERY_MODES: Record<VehicleType, DeliveryMode> = {
  bike: 'MOTORBIKE',
  bus_van: 'BUS_VAN',
  truck: 'TRUCK',
}

export interface Point {
  lat: number
  lng: number
}
