/**
 * Where exposed tokens are reported (SPEC §4): the logger reports what it redacts, the HTTP layer
 * tokens sent in URLs, and keys/ExposureMonitor turns the reports into alerts.
 */
import { Context, Effect, Layer, Queue } from "effect"

export type ExposureSource = "log" | "url"

/**
 * Where exposures are reported. It has no dependencies, so the logger can be installed before
 * anything else starts and still report what it redacts.
 */
export class ExposureReports extends Context.Service<ExposureReports>()("etd/ExposureReports", {
  make: Effect.gen(function*() {
    // Sliding: a flood of leaked tokens must not grow memory.
    const queue = yield* Queue.sliding<{ token: string; source: ExposureSource }>(1024)
    /** Synchronous, so the logger can call it while it writes a line. */
    const reportUnsafe = (token: string, source: ExposureSource) => {
      Queue.offerUnsafe(queue, { token, source })
    }
    const report = (token: string, source: ExposureSource) => Queue.offer(queue, { token, source })
    return { queue, report, reportUnsafe } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
