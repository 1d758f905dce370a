import { errorMessage } from '../../shared/errors/error-message.js'
import { afterCourierLeft, afterOrderChange, concernsCouriers, type AfterChangeDeps, type LeftByCourier } from '../../shared/dispatch/after-change.js'
import type { ProducerLog } from '../../shared/dispatch/queue.js'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import type { OperatorContext } from './command.js'

/** The dispatch producer's warnings, on stderr as the CLI's others; its debug lines are dropped. */
const stderrLog: ProducerLog = {
  warn: (fields, message) => process.stderr.write(`warning: ${message} ${JSON.stringify(fields)}\n`),
  debug: () => undefined,
}

/** Runs `step` with what the step after a change needs; BullMQ is loaded only then: most commands never need it. */
async function withDispatch(context: OperatorContext, step: (deps: AfterChangeDeps) => Promise<void>): Promise<void> {
  const redis = await context.redis()
  if (!redis) return
  const { createDispatchQueue } = await import('../../shared/dispatch/queue.js')
  const dispatch = createDispatchQueue(context.config, stderrLog)
  try {
    await step({ redis, prefix: context.config.QUEUE_PREFIX, dispatch })
  } finally {
    await dispatch.close()
  }
}

const warnNotTold = (err: unknown) => console.error(`warning: a courier was not told: ${errorMessage(err)}`)

/**
 * After an operator's change commits: the couriers it concerns hear of it (an offer withdrawn, an
 * order cancelled, an order given them), an order handed back is offered again, and a courier it
 * freed is looked at for the orders waiting near them, as when the API or the console makes the
 * change.
 */
export async function tellCouriersOf(context: OperatorContext, outcome: OrderChangeOutcome): Promise<void> {
  if (outcome.kind !== 'changed' || !concernsCouriers(outcome)) return
  await withDispatch(context, (deps) => afterOrderChange(deps, outcome, warnNotTold))
}

/** After `courier:disable`: the courier leaves the map, and the orders they held or were offered go to the next courier now. */
export async function redispatchLeft(context: OperatorContext, left: LeftByCourier): Promise<void> {
  await withDispatch(context, (deps) => afterCourierLeft(deps, left, warnNotTold))
}
