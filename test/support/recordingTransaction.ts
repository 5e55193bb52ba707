/** For unit tests over mocked repositories: a transaction runner that writes where each transaction begins and how it ends. */
import { Effect, Exit, Layer } from "effect"
import { dieOnSqlError } from "../../src/db/errors.js"
import { Transaction } from "../../src/db/Repository.js"

export const recordingTransaction = (log: Array<string>) => {
  const write = (line: string) => Effect.sync(() => void log.push(line))
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    dieOnSqlError(
      write("BEGIN").pipe(
        Effect.andThen(effect),
        Effect.onExit((exit) => write(Exit.isSuccess(exit) ? "COMMIT" : "ROLLBACK"))
      )
    )
  // Mocks cannot tell whether a transaction is open: every atomic block is recorded as one.
  return Layer.succeed(Transaction, { run, atomic: run })
}
