import type { FastifyBaseLogger } from 'fastify'
import { afterOrderChange } from '../../shared/dispatch/after-change.js'
import { changeOrder, type OrderChange, type OrderChangeOutcome } from '../../shared/orders/change.js'
import type { OrderAccess } from '../../shared/db/orders.js'
import type { ConsoleDeps } from './deps.js'
import type { Flash } from './session-store.js'
import { money } from './format.js'
import { toMinor } from '../../shared/money.js'

/** How an order change reads on the next page: the console's one mapping of the state machine's outcomes. */
export function orderChangeFlash(outcome: OrderChangeOutcome, what: 'cancel' | 'advance'): Flash {
  switch (outcome.kind) {
    case 'changed': {
      const { order } = outcome
      const refunded = typeof order.refunded_amount === 'number' && order.refunded_amount > 0 && typeof order.currency === 'string'
        ? ` ${money(toMinor(order.refunded_amount), order.currency)} was refunded to the wallet.` : ''
      return { kind: 'ok', text: what === 'cancel' ? `Order ${String(order.order_id)} is cancelled.${refunded}` : `Order ${String(order.order_id)} is now ${String(order.status)}.` }
    }
    case 'unchanged':
      return { kind: 'ok', text: `Order ${String(outcome.order.order_id)} was already cancelled; nothing changed.` }
    case 'not_found':
      return { kind: 'error', text: `Order ${outcome.orderId} was not found.` }
    case 'refused':
    case 'invalid':
    case 'moved_on':
      return { kind: 'error', text: outcome.message }
  }
}

/**
 * An order change made in the console, as the API and the CLI make it: through the one state
 * machine, then, once it has committed, the couriers it concerns told on their stream (an offer
 * withdrawn, an order they hold cancelled; DESIGN 17) and dispatch asked to look again.
 */
export async function changeOrderAndTell(deps: Pick<ConsoleDeps, 'sql' | 'redis' | 'config' | 'dispatch'>, log: FastifyBaseLogger, target: { orderId: string; scope: OrderAccess }, change: OrderChange, audit: { actor: string } | null = null): Promise<OrderChangeOutcome> {
  const outcome = await changeOrder(deps.sql, target, change, audit)
  if (outcome.kind === 'changed') await afterOrderChange({ redis: deps.redis, prefix: deps.config.QUEUE_PREFIX, dispatch: deps.dispatch }, outcome, (err) => log.warn({ err }, 'courier notice lost'))
  return outcome
}
