import type { Courier, HistoryEntry, OrderStatus, SandboxScenario } from '../courier.js'
import { TERMINAL_STATUSES } from './state-machine.js'

/** The made-up courier who takes every test order. */
export const SANDBOX_COURIER: Courier = { name: 'Sandbox Courier', phone: '+2348000000000', vehicle_plate: 'TEST-000-XY' }

export interface SandboxStep {
  to: OrderStatus
  reason: string | null
}

/** What a test order needs to know about itself to be moved on. */
export interface SandboxOrder {
  status: OrderStatus
  history: HistoryEntry[]
  scenario: SandboxScenario
}

/**
 * The sandbox courier's next step for a test order (docs/contracts.md section 8), or null when
 * it stays where it is: `deliver` goes created → assigned → picked_up → delivered; `fail` fails
 * after pick-up, then returns the parcel; `unassign` gives the order back once after the first
 * assignment, then delivers it; `manual` never moves by itself. Pure: the state machine still
 * decides whether the move is allowed.
 */
export function nextSandboxStep(order: SandboxOrder): SandboxStep | null {
  if (order.scenario === 'manual' || TERMINAL_STATUSES.includes(order.status)) return null
  switch (order.status) {
    case 'created':
      return { to: 'assigned', reason: null }
    case 'assigned':
      if (order.scenario === 'unassign' && !order.history.some((entry) => entry.status === 'created' && entry.reason !== undefined)) {
        return { to: 'created', reason: 'sandbox: the courier gave the order back' }
      }
      return { to: 'picked_up', reason: null }
    case 'picked_up':
      return order.scenario === 'fail' ? { to: 'failed', reason: 'sandbox: recipient unreachable' } : { to: 'delivered', reason: null }
    case 'failed':
      return { to: 'returned', reason: null }
    default:
      return null
  }
}
