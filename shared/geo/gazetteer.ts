import type { Point } from '../courier.js'
import { DISTRICTS, STATES, type StatePlace } from './places.js'

/** Lower case, punctuation to spaces, padded: `" d line "` then matches as whole words only. */
function normalize(text: string): string {
  return ` ${text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim()} `
}

/** Where a place name occurs as whole words, or -1. */
function mentionAt(text: string, name: string): number {
  return text.lastIndexOf(` ${name} `)
}

/** The longest of a place's names that the text mentions, with where it occurs. */
function bestMention(text: string, names: string[]): { length: number; at: number } | null {
  let best: { length: number; at: number } | null = null
  for (const name of names) {
    const at = mentionAt(text, name)
    if (at >= 0 && (!best || name.length > best.length)) best = { length: name.length, at }
  }
  return best
}

/** A state field such as `Lagos`, `Lagos State`, `FCT` or `Abuja`, or undefined when unknown. */
export function findState(state: string | undefined): StatePlace | undefined {
  if (!state) return undefined
  return stateNamed(state) ?? STATES.find((place) => bestMention(normalize(state).replace(/ state $/, ' '), place.names))
}

/** The state (or the FCT) this text is the name of (`Lagos`, `lagos state`, `Abuja`), and no other: not one it only mentions (`Not Lagos`). */
export function stateNamed(state: string): StatePlace | undefined {
  const text = normalize(state).replace(/ state $/, ' ')
  return STATES.find((place) => place.names.some((name) => text === ` ${name} `))
}

/**
 * Places an address offline. A district beats a state; a state given separately keeps only its
 * own districts, and a district whose state the text also names beats one whose state it does
 * not ("GRA, Port Harcourt"). Without any district, the separately given state, then the state
 * named last in the text (addresses end with city and state), stands for the address.
 */
export function locateInGazetteer(address: string, state?: string): Point | null {
  const text = normalize(address)
  const narrowed = findState(state)
  const statesInText = new Set(STATES.filter((place) => bestMention(text, place.names)).map((place) => place.state))

  let best: { at: Point; corroborated: boolean; length: number } | null = null
  for (const district of DISTRICTS) {
    if (narrowed && district.state !== narrowed.state) continue
    const mention = bestMention(text, district.names)
    if (!mention) continue
    const candidate = { at: district.at, corroborated: statesInText.has(district.state), length: mention.length }
    if (!best || candidate.corroborated > best.corroborated || (candidate.corroborated === best.corroborated && candidate.length > best.length)) best = candidate
  }
  if (best) return best.at
  if (narrowed) return narrowed.at

  let lastState: { at: Point; position: number } | null = null
  for (const place of STATES) {
    const mention = bestMention(text, place.names)
    if (mention && (!lastState || mention.at > lastState.position)) lastState = { at: place.at, position: mention.at }
  }
  return lastState?.at ?? null
}
