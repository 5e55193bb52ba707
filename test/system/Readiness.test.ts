/**
 * Readiness (SPEC §12): 200 when the database answers, migrations are applied and the workers run;
 * otherwise 503 `not_ready` naming the failed check.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Result, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, type SqlConnection, SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import { MIGRATIONS_TABLE } from "../../src/db/Database.js"
import { NotReady } from "../../src/domain/Errors.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { expectError, jsonObject } from "../http/helpers.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

/** A SqlClient whose every statement fails (a database that went away) or never answers. */
const brokenSql = (mode: "fails" | "hangs") => {
  const statement = <A>(): Effect.Effect<A, SqlError.SqlError> =>
    mode === "fails"
      ? Effect.fail(
        new SqlError.SqlError({
          reason: new SqlError.ConnectionError({
            cause: new Error("connection refused"),
            message: "connection refused"
          })
        })
      )
      : Effect.never
  const connection: SqlConnection.Connection = {
    execute: () => statement(),
    executeRaw: () => statement(),
    executeValues: () => statement(),
    executeValuesUnprepared: () => statement(),
    executeUnprepared: () => statement(),
    executeStream: () => Stream.fromEffect(statement())
  }
  return Layer.effect(
    SqlClient.SqlClient,
    SqlClient.make({
      acquirer: Effect.succeed(connection),
      compiler: PgClient.makeCompiler(),
      driver: "broken",
      spanAttributes: []
    })
  ).pipe(Layer.provide(Reactivity.layer))
}

const checkWith = (mode: "fails" | "hangs") =>
  Effect.flatMap(Readiness, (readiness) => readiness.check).pipe(
    Effect.provide(Readiness.layer.pipe(Layer.provide(brokenSql(mode))))
  )

describe("Readiness with a database that does not answer", () => {
  it.effect("fails the database check (and so the migrations check) when statements fail", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(checkWith("fails"))
      expect(error).toBeInstanceOf(NotReady)
      expect(error.checks).toEqual({ database: "failed", migrations: "failed", workers: "ok" })
      expect(error.message).toContain("database")
    }))

  it.effect("fails within its timeout when statements hang", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.result(checkWith("hangs")))
      // The check gives the database two seconds.
      yield* TestClock.adjust("1 second")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(fiber)
      expect(Result.isFailure(result)).toBe(true)
      if (Result.isFailure(result)) expect(result.failure.checks["database"]).toBe("failed")
    }))
})

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(`readiness (${database})`, (it) => {
    it.effect("GET /readyz is 200 with every check ok", () =>
      Effect.gen(function*() {
        const response = yield* rawRequest("GET", "/readyz")
        expect(response.status).toBe(200)
        expect(jsonObject(response)).toEqual({
          status: "ok",
          checks: { database: "ok", migrations: "ok", workers: "ok" }
        })
        // An alias of a root path does not exist: /readyz is served at the root only.
        expect((yield* rawRequest("GET", "/v1/readyz")).status).toBe(404)
      }))

    it.effect("a running worker keeps it ready; a worker that died makes it 503 not_ready naming workers", () =>
      Effect.gen(function*() {
        const readiness = yield* Readiness
        const running = yield* Effect.forkDetach(Effect.never)
        yield* readiness.registerWorker("test-running", running)
        expect((yield* rawRequest("GET", "/readyz")).status).toBe(200)

        const died = yield* Effect.forkDetach(Effect.fail("boom"))
        yield* Fiber.await(died)
        yield* readiness.registerWorker("test-died", died)
        const response = yield* rawRequest("GET", "/readyz")
        const body = expectError(response, 503, "not_ready")
        expect(body["checks"]).toEqual({ database: "ok", migrations: "ok", workers: "failed" })
        expect(body["message"]).toContain("workers")
        yield* Fiber.interrupt(running)
      }))
  })

  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `readiness without migrations (${database})`,
    (it) => {
      it.effect("503 not_ready naming migrations when the applied migrations are missing", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`DELETE FROM ${sql(MIGRATIONS_TABLE)}`
          const response = yield* rawRequest("GET", "/readyz")
          const body = expectError(response, 503, "not_ready")
          expect(body["checks"]).toEqual({ database: "ok", migrations: "failed", workers: "ok" })
          expect(body["message"]).toContain("migrations")
          expect(body["message"]).not.toContain("database")

          // Without the table at all, the check still answers (503), it does not fail with a 500.
          yield* sql`DROP TABLE ${sql(MIGRATIONS_TABLE)}`
          const dropped = expectError(yield* rawRequest("GET", "/readyz"), 503, "not_ready")
          expect(dropped["checks"]).toEqual({ database: "ok", migrations: "failed", workers: "ok" })
          // Liveness is not readiness.
          expect((yield* rawRequest("GET", "/healthz")).status).toBe(200)
        }))
    }
  )
}
