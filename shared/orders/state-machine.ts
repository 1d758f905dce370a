import type { OrderActor, OrderEventType, OrderStatus } from '../courier.js'

/** One allowed move: who may make it, the event it writes, and whether it needs a reason. */
export interface Move {
  from: OrderStatus
  to: OrderStatus
  by: readonly OrderActor[]
  event: OrderEventType
  reasonRequired: boolean
}

/**
 * The only moves an order can make (docs/contracts.md section 6). Every path that changes an
 * order (the API's cancel, the operator's dispatch and cancel, the sandbox courier) asks this
 * table; nothing else knows which statuses follow which.
 */
const MOVES: readonly Move[] = [
  { from: 'created', to: 'assigned', by: ['dispatch'], event: 'order.assigned', reasonRequired: false },
  { from: 'created', to: 'cancelled', by: ['business', 'operator'], event: 'order.cancelled', reasonRequired: false },
  { from: 'assigned', to: 'created', by: ['dispatch'], event: 'order.unassigned', reasonRequired: true },
  { from: 'assigned', to: 'picked_up', by: ['dispatch'], event: 'order.picked_up', reasonRequired: false },
  { from: 'assigned', to: 'cancelled', by: ['business', 'operator'], event: 'order.cancelled', reasonRequired: false },
  { from: 'picked_up', to: 'delivered', by: ['dispatch'], event: 'order.delivered', reasonRequired: false },
  { from: 'picked_up', to: 'failed', by: ['dispatch'], event: 'order.failed', reasonRequired: true },
  { from: 'failed', to: 'returned', by: ['dispatch'], event: 'order.returned', reasonRequired: false },
]

export const TERMINAL_STATUSES: readonly OrderStatus[] = ['delivered', 'cancelled', 'returned']

/** The move from `from` to `to` that `actor` may make, or null when the machine refuses it. */
export function findMove(from: OrderStatus, to: OrderStatus, actor: OrderActor): Move | null {
  return MOVES.find((move) => move.from === from && move.to === to && move.by.includes(actor)) ?? null
}

/** The statuses `actor` may move an order in `from` to: the sandbox courier and the tests walk these. */
export function nextStatuses(from: OrderStatus, actor: OrderActor): OrderStatus[] {
  return MOVES.filter((move) => move.from === from && move.by.includes(actor)).map((move) => move.to)
}

/** The refusal for a move the table does not hold, worded as the CLI and the API both answer it. */
export function illegalMoveMessage(orderId: string, from: OrderStatus, to: OrderStatus): string {
  return `cannot move ${orderId} from ${from} to ${to}`
}
