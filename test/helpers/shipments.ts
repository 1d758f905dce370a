/** Points inside the demo card's zones (shared/pricing/demo-rate-card.json). */
export const ISLAND = { lat: 6.45, lng: 3.40 }
export const LEKKI = { lat: 6.44, lng: 3.47 }
export const IKEJA = { lat: 6.60, lng: 3.35 }
/** Far outside every zone of the demo card. */
export const KANO = { lat: 12.0, lng: 8.52 }

/** A bike shipment from the Island to Ikeja with coordinates, so no geocoding is involved. */
export function shipment(overrides: Record<string, unknown> = {}) {
  return {
    dropoff_address: '5 Allen Avenue, Ikeja',
    dropoff_state: 'Lagos',
    recipient_name: 'Chidi Okafor',
    recipient_phone: '+2348020000000',
    item_name: 'Phone case',
    weight: 2,
    quantity: 1,
    vehicle_type: 'bike',
    pickup_latitude: ISLAND.lat,
    pickup_longitude: ISLAND.lng,
    dropoff_latitude: IKEJA.lat,
    dropoff_longitude: IKEJA.lng,
    ...overrides,
  }
}

/** A bike quote from Lekki to Ikeja with coordinates. */
export function quoteRequest(overrides: Record<string, unknown> = {}) {
  return {
    pickup_address: 'Lekki Phase 1',
    dropoff_address: 'Ikeja',
    weight: 2,
    vehicle_type: 'bike',
    pickup_latitude: LEKKI.lat,
    pickup_longitude: LEKKI.lng,
    dropoff_latitude: IKEJA.lat,
    dropoff_longitude: IKEJA.lng,
    ...overrides,
  }
}
