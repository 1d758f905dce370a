import { errorMessage } from '../../shared/errors/error-message.js'
import { afterOrderChange, concernsCouriers } from '../../shared/dispatch/after-change.js'
import type { ProducerLog } from '../../shared/dispatch/queue.js'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import type { OperatorContext } from './command.js'

/** The dispatch producer's warnings, on stderr as the CLI's others; its debug lines are dropped. */
const stderrLog: ProducerLog = {
  warn: (fields, message) => process.stderr.write(`warning: ${message} ${JSON.stringify(fields)}\n`),
  debug: () => undefined,
}

/**
 * After an operator's change commits: the couriers it concerns hear of it (an offer withdrawn, an
 * order cancelled, an order given them), an order handed back is offered again, and a courier it
 * freed is looked at for the orders waiting near them, as when the API or the console makes the
 * change. BullMQ is loaded only then: most commands never need it.
 */
export async function tellCouriersOf(context: OperatorContext, outcome: OrderChangeOutcome): Promise<void> {
  if (outcome.kind !== 'changed' || !concernsCouriers(outcome)) return
  const redis = await context.redis()
  if (!redis) return
  const { createDispatchQueue } = await import('../../shared/dispatch/queue.js')
  const dispatch = createDispatchQueue(context.config, stderrLog)
  try {
    await afterOrderChange({ redis, prefix: context.config.QUEUE_PREFIX, dispatch }, outcome, (err) => console.error(`warning: a courier was not told: ${errorMessage(err)}`))
  } finally {
    await dispatch.close()
  }
}
