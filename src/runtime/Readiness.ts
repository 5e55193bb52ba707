/**
 * Readiness (SPEC §12): the database answers, every migration this build knows is applied, and
 * every background worker is running. Workers register their fibers here when they start. The state
 * authorities' last status answers travel with it as details (AuthorizerMonitor.ts).
 */
import { Context, Duration, Effect, type Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { appliedMigration, latestMigrationId, ping } from "../db/Database.js"
import type { AuthorizerStatus } from "../domain/AuthorizerStatus.js"
import { NotReady } from "../domain/Errors.js"

type CheckResult = "ok" | "failed"

export class Readiness extends Context.Service<Readiness>()("etd/Readiness", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workers = new Map<string, Fiber.Fiber<unknown, unknown>>()
    let authorizers: ReadonlyArray<AuthorizerStatus> | undefined
    const latest = yield* Effect.orDie(latestMigrationId)

    /** Called by a worker layer with the fiber it forked; a finished fiber fails readiness. */
    const registerWorker = (name: string, fiber: Fiber.Fiber<unknown, unknown>) =>
      Effect.sync(() => void workers.set(name, fiber))

    /** The authorizers' statuses as last asked, replacing the previous ones. */
    const reportAuthorizers = (statuses: ReadonlyArray<AuthorizerStatus>) =>
      Effect.sync(() => void (authorizers = statuses))

    const within = <A, E>(effect: Effect.Effect<A, E>) =>
      effect.pipe(Effect.timeout(Duration.seconds(2)), Effect.option, Effect.map(Option.isSome))

    const database = within(Effect.provideService(ping, SqlClient.SqlClient, sql))
    const migrations = Effect.map(
      Effect.option(Effect.timeout(Effect.provideService(appliedMigration, SqlClient.SqlClient, sql), "2 seconds")),
      Option.match({ onNone: () => false, onSome: (applied) => applied >= latest })
    )
    // Read at each check, not when the service is built (before any worker has registered).
    const workersRunning = Effect.sync(() => [...workers.values()].every((fiber) => fiber.pollUnsafe() === undefined))

    const check = Effect.gen(function*() {
      const [db, migrated, running] = yield* Effect.all([database, migrations, workersRunning], {
        concurrency: "unbounded"
      })
      const checks: Record<string, CheckResult> = {
        database: db ? "ok" : "failed",
        migrations: db && migrated ? "ok" : "failed",
        workers: running ? "ok" : "failed"
      }
      const failed = Object.entries(checks).filter(([, result]) => result === "failed").map(([name]) => name)
      if (failed.length > 0) {
        return yield* new NotReady({ message: `Not ready: ${failed.join(", ")} check failed.`, checks })
      }
      // Nothing to show until there is something to ask (the simulator is never asked).
      return { status: "ok" as const, checks, ...(authorizers?.length ? { authorizers } : {}) }
    }).pipe(Effect.withSpan("Readiness.check"))

    return { check, registerWorker, reportAuthorizers } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
