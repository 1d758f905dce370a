import { errorMessage } from '../../shared/errors/error-message.js'
import { tellCouriers } from '../../shared/couriers/stream.js'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import type { OperatorContext } from './command.js'

/** After an operator's change commits: the couriers it concerns hear of it (an offer withdrawn, an order cancelled). */
export async function tellCouriersOf(context: OperatorContext, outcome: OrderChangeOutcome): Promise<void> {
  if (outcome.kind !== 'changed' || outcome.notices.length === 0) return
  const redis = await context.redis()
  if (!redis) return
  await tellCouriers(redis, context.config.QUEUE_PREFIX, outcome.notices, (err) => console.error(`warning: a courier was not told: ${errorMessage(err)}`))
}
