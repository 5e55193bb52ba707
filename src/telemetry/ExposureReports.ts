/**
 * Where exposed tokens are reported (SPEC §4): the logger reports the tokens in a line it writes,
 * the HTTP layer those in a request URL and the API keys sent with a browser's request marks, and
 * keys/ExposureMonitor looks them up and alerts.
 *
 * Anyone can put token-shaped strings in a URL, so reports are built not to be flooded: callers
 * report only well-formed tokens (`findTokens`), at most MAX_TOKENS_PER_REPORT are taken from one
 * request or line, a token already queued or lately looked up is not queued again, and each
 * source has its own queue. A full URL queue makes the reporting request wait for room instead of
 * dropping anything, so junk slows its sender and never pushes out someone else's real token; log
 * lines, which no client can fill at will, keep their own room.
 */
import { Context, Effect, Layer, Metric, Queue } from "effect"
import { hashToken } from "../domain/Tokens.js"
import { exposureCandidates } from "./Metrics.js"
export { exposureCandidates }

export type ExposureSource = "log" | "url" | "browser"

/** An honest leak carries a token or two; more than this in one request or line is junk. */
export const MAX_TOKENS_PER_REPORT = 16
/** Tokens waiting for their lookup, per source. */
export const QUEUE_CAPACITY = 1024
/** How many looked-up tokens (as hashes) are remembered, so a repeated one is not looked up again. */
export const REMEMBERED_TOKENS = 4096

export type CandidateOutcome =
  /** Looked up; no key or session has that hash. */
  | "unknown"
  /** Queued or looked up already. */
  | "duplicate"
  /** Beyond MAX_TOKENS_PER_REPORT in one request or line. */
  | "over_cap"
  /** A log line's token with its queue full: the one loss, counted so it is seen. */
  | "overflow"

/** A token waiting for its lookup. */
export interface Candidate {
  readonly token: string
  readonly hash: string
  readonly source: ExposureSource
  /** The client of the request that first reported it (url, browser); a log line has none. */
  readonly clientAddress: string | undefined
}

/**
 * Where exposures are reported. It has no dependencies, so the logger can be installed before
 * anything else starts and still report what it finds.
 */
export class ExposureReports extends Context.Service<ExposureReports>()("etd/ExposureReports", {
  make: Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const queues: Record<ExposureSource, Queue.Queue<Candidate>> = {
      url: yield* Queue.bounded<Candidate>(QUEUE_CAPACITY),
      log: yield* Queue.bounded<Candidate>(QUEUE_CAPACITY),
      browser: yield* Queue.bounded<Candidate>(QUEUE_CAPACITY)
    }
    // Hashes, not tokens: what is remembered for deduplication holds no secret.
    const queued = new Set<string>()
    const lookedUp = new Set<string>()

    /** Synchronous, so the logger's reports are counted while it writes a line. */
    const count = (outcome: CandidateOutcome, source: ExposureSource, amount: number) => {
      if (amount > 0) Metric.withAttributes(exposureCandidates, { outcome, source }).updateUnsafe(amount, context)
    }

    /** The report's new candidates, marked as queued; the rest counted. */
    const admit = (
      tokens: ReadonlyArray<string>,
      source: ExposureSource,
      clientAddress: string | undefined
    ): Array<Candidate> => {
      const taken = tokens.slice(0, MAX_TOKENS_PER_REPORT)
      count("over_cap", source, tokens.length - taken.length)
      const fresh: Array<Candidate> = []
      for (const token of taken) {
        const hash = hashToken(token)
        if (queued.has(hash) || lookedUp.has(hash)) continue
        queued.add(hash)
        fresh.push({ token, hash, source, clientAddress })
      }
      count("duplicate", source, taken.length - fresh.length)
      return fresh
    }

    /**
     * Queues the distinct well-formed tokens of one request or line (as `findTokens` returns them).
     * Waits for room in the source's queue rather than drop anything. The wait cannot be
     * interrupted: a candidate marked as queued must reach the queue, or it would be skipped as a
     * duplicate forever. The monitor drains the queues until the server has stopped.
     */
    const report = (tokens: ReadonlyArray<string>, source: ExposureSource, clientAddress?: string) =>
      Effect.suspend(() => {
        const fresh = admit(tokens, source, clientAddress)
        return fresh.length === 0 ? Effect.void : Effect.uninterruptible(Queue.offerAll(queues[source], fresh))
      }).pipe(Effect.asVoid)

    /** For the logger, which cannot wait: what finds no room is counted as an overflow. */
    const reportUnsafe = (tokens: ReadonlyArray<string>, source: ExposureSource) => {
      const left = Queue.offerAllUnsafe(queues[source], admit(tokens, source, undefined))
      for (const candidate of left) queued.delete(candidate.hash)
      count("overflow", source, left.length)
    }

    /** The next candidate from a source, for the monitor. */
    const take = (source: ExposureSource) => Queue.take(queues[source])

    /** The monitor has looked the candidate up: remember it, forgetting the oldest beyond the limit. */
    const settle = (candidate: Candidate) =>
      Effect.sync(() => {
        queued.delete(candidate.hash)
        lookedUp.add(candidate.hash)
        const oldest = lookedUp.values().next()
        if (lookedUp.size > REMEMBERED_TOKENS && !oldest.done) lookedUp.delete(oldest.value)
      })

    /** The lookup failed: forget the candidate, so the token is looked up when it is seen again. */
    const release = (candidate: Candidate) => Effect.sync(() => void queued.delete(candidate.hash))

    return { report, reportUnsafe, take, settle, release } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
