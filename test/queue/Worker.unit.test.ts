/**
 * The worker skeleton alone, over a pipeline that writes down what it is asked to do: where the
 * transaction begins and ends around the facts and the writes, when `settled` runs, a job with
 * nothing to write, a single write, a lost lease. The two real pipelines are tested in
 * test/documents and test/webhooks.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Statement } from "effect/sql"
import { type LeasedQueue, LeaseLost } from "../../src/queue/LeasedQueue.js"
import { makeWorker, type Pipeline } from "../../src/queue/Worker.js"
import { recordingTransaction } from "../support/recordingTransaction.js"

interface Job {
  readonly id: number
  readonly lockedBy: string
  readonly attempts: number
  readonly traceparent: string | null
}

const job: Job = { id: 1, lockedBy: "test:claim", attempts: 1, traceparent: null }

const notHere = Effect.die("the skeleton uses the queue only to run the pool")
const queue: LeasedQueue<Job, never> = {
  name: "test",
  channel: "etd_test",
  enqueue: () => notHere,
  enqueueing: () => {
    throw new Error("the skeleton enqueues nothing")
  },
  wake: notHere,
  claim: () => notHere,
  complete: () => notHere,
  retryAt: () => notHere,
  ending: () => Statement.fragment([]),
  renew: () => notHere,
  requeue: () => notHere,
  backlog: notHere,
  cancelWaiting: () => notHere
}

type Attempt = "write" | "one-write" | "lose-lease"

/** A pipeline whose steps write their names to `log`; `outcome` is what its attempt comes to. */
const pipelineOf = (
  log: Array<string>,
  outcome: Option.Option<Attempt>
): Pipeline<Job, string, Attempt, number, string> => {
  const write = (line: string) => Effect.sync(() => void log.push(line))
  return {
    queue,
    span: () => ({ name: "Test.job", kind: "consumer" }),
    leaseLost: "lost the lease on a test job",
    prefetch: (jobs) => Effect.as(write(`prefetch:${jobs.map((j) => j.id).join(",")}`), "read"),
    attempt: (_, prefetched) => Effect.as(write(`attempt:${prefetched}`), outcome),
    facts: () => Effect.as(write("facts"), 42),
    decide: (attempt, _, facts) => `${attempt}:${facts}`,
    apply: (decision) =>
      decision.startsWith("lose-lease") ? Effect.andThen(write("apply"), new LeaseLost()) : write(`apply:${decision}`),
    singleWrite: (attempt) => attempt === "one-write",
    settled: (decision) => write(`settled:${decision}`)
  }
}

const run = (outcome: Option.Option<Attempt>, prefetched?: string) => {
  const log: Array<string> = []
  return Effect.gen(function*() {
    const worker = yield* makeWorker(pipelineOf(log, outcome))
    yield* worker.process(job, prefetched)
    return log
  }).pipe(Effect.provide(recordingTransaction(log)))
}

/** What a job comes to, the claim's prefetch if any, and what the skeleton must do with it, step by step. */
const cases: ReadonlyArray<readonly [string, Option.Option<Attempt>, string | undefined, ReadonlyArray<string>]> = [
  [
    "decides on the facts read in the transaction that writes the decision; counts it once committed",
    Option.some("write"),
    undefined,
    ["prefetch:1", "attempt:read", "BEGIN", "facts", "apply:write:42", "COMMIT", "settled:write:42"]
  ],
  [
    "a job handled with its claim's prefetch reads nothing for itself",
    Option.some("write"),
    "claimed",
    ["attempt:claimed", "BEGIN", "facts", "apply:write:42", "COMMIT", "settled:write:42"]
  ],
  [
    "a single write runs without a transaction around it",
    Option.some("one-write"),
    undefined,
    ["prefetch:1", "attempt:read", "facts", "apply:one-write:42", "settled:one-write:42"]
  ],
  ["an attempt with nothing to write writes nothing", Option.none(), undefined, ["prefetch:1", "attempt:read"]],
  [
    "a lost lease rolls the writes back, counts nothing, and ends the job quietly for its new owner",
    Option.some("lose-lease"),
    undefined,
    ["prefetch:1", "attempt:read", "BEGIN", "facts", "apply", "ROLLBACK"]
  ]
]

describe("worker skeleton", () => {
  for (const [title, outcome, prefetched, steps] of cases) {
    it.effect(title, () => Effect.map(run(outcome, prefetched), (log) => expect(log).toEqual(steps)))
  }
})
