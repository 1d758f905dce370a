/**
 * Thrown by a delivery job whose attempt failed and is to be tried again: BullMQ keeps the job
 * and runs it again after `delayMs`, the wait the delivery row recorded.
 */
export class RetryLaterError extends Error {
  override name = 'RetryLaterError'
  constructor(message: string, readonly delayMs: number) {
    super(message)
  }
}
