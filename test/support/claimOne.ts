/** Tests drive a worker one job at a time: the next due job of a queue, if any, leased for a minute. */
import { Duration, Effect, Option } from "effect"
import type { Lease, LeasedQueue } from "../../src/queue/LeasedQueue.js"

export const claimOne = <Job extends Lease, New>(queue: LeasedQueue<Job, New>, lease: Duration.Input = "60 seconds") =>
  Effect.map(queue.claim(1, Duration.fromInputUnsafe(lease)), (jobs) => Option.fromNullishOr(jobs[0]))
