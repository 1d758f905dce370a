import fc from 'fast-check'

/*
 * fast-check generators the property tests share: a valid input varied a little, and text of any
 * shape. Each test keeps the values that are its own (real ids, the words its fields take).
 */

/**
 * `valid` with up to `most` of `fields` given values from `value`, the first of them sometimes
 * dropped instead: inputs that mostly pass the first checks and so reach the logic behind them.
 */
export function nearly<T>(valid: Record<string, T>, fields: readonly string[], value: fc.Arbitrary<T>, most = 3): fc.Arbitrary<Record<string, T>> {
  if (fields.length === 0) return fc.constant({ ...valid })
  return fc.tuple(fc.uniqueArray(fc.constantFrom(...fields), { maxLength: most }), fc.array(value, { minLength: most, maxLength: most }), fc.boolean())
    .map(([picked, values, drop]) => {
      const result: Record<string, T> = { ...valid }
      picked.forEach((field, i) => (drop && i === 0 ? delete result[field] : (result[field] = values[i])))
      return result
    })
}

/** Any of `fields`, each with a value from `valueOf(field)`: the names an input takes, in any mix. */
export function someOf<T>(fields: readonly string[], valueOf: (field: string) => fc.Arbitrary<T>): fc.Arbitrary<Partial<Record<string, T>>> {
  return fc.record(Object.fromEntries(fields.map((field) => [field, valueOf(field)])), { requiredKeys: [] })
}

/** Text as a form or a command line carries it: short, any Unicode, past 255 characters, numbers, and `known` words. */
export function anyText(known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ minLength: 256, maxLength: 3000 }),
    fc.integer().map(String),
    fc.double().map(String),
    fc.constantFrom(...known),
  )
}
