/**
 * How much the fuzz runs. `npm test` runs the short fuzz: a fixed seed, a few runs per endpoint and
 * authentication, on the embedded database. `npm run fuzz` sets FUZZ_LONG: many runs, a new seed
 * each time unless FUZZ_SEED is given, and PostgreSQL too when TEST_DATABASE_URL is set.
 */
import { type TestDatabase, testDatabases } from "../support/Databases.js"

const SHORT_SEED = 20_260_516
const SHORT_RUNS = 5
const LONG_RUNS = 150

const numberFrom = (name: string): number | undefined => {
  const text = process.env[name]
  if (text === undefined || text === "") return undefined
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got ${text}`)
  return value
}

export interface FuzzSettings {
  readonly long: boolean
  readonly seed: number
  /** Runs per endpoint with the authentication it takes; each other kind gets a quarter. */
  readonly runs: number
  readonly databases: ReadonlyArray<TestDatabase>
}

export const fuzzSettings = (): FuzzSettings => {
  const long = process.env["FUZZ_LONG"] === "1"
  return {
    long,
    seed: numberFrom("FUZZ_SEED") ?? (long ? Math.floor(Math.random() * 2 ** 31) : SHORT_SEED),
    runs: numberFrom("FUZZ_RUNS") ?? (long ? LONG_RUNS : SHORT_RUNS),
    databases: long ? testDatabases : ["embedded"]
  }
}

/** How to run these cases again, printed with every failure. */
export const replayHint = (settings: FuzzSettings) =>
  `replay with: FUZZ_SEED=${settings.seed} FUZZ_RUNS=${settings.runs} npm run fuzz`
