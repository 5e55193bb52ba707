/**
 * The repository boundary (`repository()` in src/db/Repository.ts): every method runs in a span
 * named after its repository and itself, and a failed statement becomes a defect while the
 * typed failures a caller can act on pass through.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { SqlError } from "effect/sql"
import { repository } from "../../src/db/Repository.js"

const databaseDown = new SqlError.SqlError({
  reason: new SqlError.ConnectionError({ cause: new Error("connection refused"), message: "connection refused" })
})

class Taken {
  readonly _tag = "Taken"
}

const spanName = Effect.map(Effect.currentSpan, (span) => span.name)

const repo = repository("ExampleRepo", {
  find: (id: string) => Effect.map(spanName, (name) => ({ id, span: name })),
  count: spanName,
  broken: () => Effect.fail(databaseDown),
  taken: () => Effect.fail(new Taken()),
  label: "not an effect"
})

describe("repository()", () => {
  it.effect("runs each method, called or not, in a span named <repository>.<method>", () =>
    Effect.gen(function*() {
      expect(yield* repo.find("x")).toEqual({ id: "x", span: "ExampleRepo.find" })
      expect(yield* repo.count).toBe("ExampleRepo.count")
      expect(repo.label).toBe("not an effect")
    }))

  it.effect("a failed statement is a defect; a typed failure stays a failure", () =>
    Effect.gen(function*() {
      const broken = yield* Effect.exit(repo.broken())
      expect(Exit.isFailure(broken) && Cause.hasDies(broken.cause)).toBe(true)
      const taken = yield* Effect.exit(repo.taken())
      expect(Exit.isFailure(taken) && Cause.hasFails(taken.cause)).toBe(true)
    }))
})
