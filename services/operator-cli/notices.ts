import { errorMessage } from '../../shared/errors/error-message.js'
import { concernsCouriers, tellCouriers } from '../../shared/couriers/stream.js'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import type { OperatorContext } from './command.js'

/** After an operator's change commits: the couriers it concerns hear of it (an offer withdrawn, an order cancelled, an order given them). */
export async function tellCouriersOf(context: OperatorContext, outcome: OrderChangeOutcome): Promise<void> {
  if (outcome.kind !== 'changed' || !concernsCouriers(outcome)) return
  const redis = await context.redis()
  if (!redis) return
  await tellCouriers(redis, context.config.QUEUE_PREFIX, outcome, (err) => console.error(`warning: a courier was not told: ${errorMessage(err)}`))
}
