/**
 * `npm run operator -- <command>` (dist/operator.js; `npm run operator:dev` runs the sources): the
 * operator's commands (src/OperatorCommand.ts). Exit status 0 when done, 1 when the command was
 * refused (unknown tenant, nothing to undo), 2 for a usage error.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { AppConfigLive } from "./Config.js"
import { operatorLayer, parseCommand, runCommand, USAGE } from "./OperatorCommand.js"

const refused = (error: { readonly message: string }) =>
  Effect.sync(() => {
    process.stderr.write(`${error.message}\n`)
    process.exitCode = 1
  })

const parsed = parseCommand(process.argv.slice(2))

if ("problem" in parsed) {
  process.stderr.write(`${parsed.problem}\n\n${USAGE}\n`)
  process.exitCode = 2
} else {
  runCommand(parsed.command).pipe(
    Effect.flatMap((lines) => Effect.sync(() => lines.forEach((line) => process.stdout.write(`${line}\n`)))),
    Effect.catchTags({ NotFound: refused, InvalidState: refused }),
    Effect.provide(operatorLayer(AppConfigLive)),
    NodeRuntime.runMain
  )
}
