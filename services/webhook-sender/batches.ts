/**
 * Calls gathered into batches: a batch opens with its first call and is run `windowMs` later, or
 * at once when it reaches `max` calls. Under load one statement serves many calls, for a wait of
 * a few milliseconds that only a call at a trickle pays in full. `run` answers every item of its
 * batch, in order; should it throw, each call of the batch fails with that error.
 */
export function inBatches<I, O>(run: (items: I[]) => Promise<PromiseSettledResult<O>[]>, options: { max: number; windowMs: number }): (item: I) => Promise<O> {
  type Call = { item: I; resolve: (value: O) => void; reject: (reason: unknown) => void }
  let open: Call[] = []
  let timer: NodeJS.Timeout | undefined

  const settle = async (batch: Call[]) => {
    try {
      const results = await run(batch.map((call) => call.item))
      batch.forEach((call, index) => {
        const result = results[index]
        if (result?.status === 'fulfilled') call.resolve(result.value)
        else call.reject(result ? result.reason : new Error('the batch gave no answer for this item'))
      })
    } catch (err) {
      for (const call of batch) call.reject(err)
    }
  }
  const send = () => {
    clearTimeout(timer)
    timer = undefined
    const batch = open
    open = []
    void settle(batch)
  }

  return (item) => new Promise<O>((resolve, reject) => {
    open.push({ item, resolve, reject })
    if (open.length >= options.max) send()
    else if (timer === undefined) timer = setTimeout(send, options.windowMs)
  })
}
