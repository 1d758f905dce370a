import { ApiError } from './api-error.js'

/** One entry of every error list in this API. */
export interface ErrorItem {
  index?: number
  field?: string
  message: string
}

/** A 400 whose `message` is the first violation and whose `errors` lists them all. */
export class ValidationError extends ApiError {
  override name = 'ValidationError'

  constructor(readonly errors: ErrorItem[]) {
    super(400, errors[0]?.message ?? 'Invalid request', { errors })
  }
}
