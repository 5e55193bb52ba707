/** What a test reads of the service's log: the JSON lines it wrote to stdout. */
import { vi } from "@effect/vitest"
import { Effect } from "effect"

/** Lines the app wrote to stdout while `effect` ran, as JSON records. */
export const withLogRecords = <A, E, R>(effect: (records: () => ReadonlyArray<any>) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => vi.spyOn(process.stdout, "write")),
    (spy) =>
      effect(() =>
        spy.mock.calls.flatMap(([chunk]) => String(chunk).split("\n")).filter((line) => line.startsWith("{")).map(
          (line) => JSON.parse(line)
        )
      ),
    (spy) => Effect.sync(() => spy.mockRestore())
  )
