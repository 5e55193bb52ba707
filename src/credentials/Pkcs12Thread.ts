/**
 * The worker thread that opens PKCS#12 bundles for `Pkcs12Opener.ts`. forge is synchronous, so the
 * key derivations a file asks for run here, where the main thread can stop them by terminating the
 * thread, instead of on the event loop that answers every other request.
 *
 * Replies are plain data: the private key travels as a PEM string and is wrapped in `Redacted` again
 * on the other side. Nothing is logged here.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import { parentPort } from "node:worker_threads"
import { parsePkcs12 } from "./Pkcs12.js"
import type { OpenReply, OpenRequest } from "./Pkcs12Opener.js"

const open = ({ pfx, password }: OpenRequest): OpenReply => {
  try {
    const exit = Effect.runSyncExit(parsePkcs12(pfx, password))
    if (Exit.isSuccess(exit)) {
      return { _tag: "Opened", certificate: { ...exit.value, privateKeyPem: Redacted.value(exit.value.privateKeyPem) } }
    }
    const failure = exit.cause.reasons.find(Cause.isFailReason)
    return failure !== undefined
      ? { _tag: "Refused", reason: failure.error.reason }
      : { _tag: "Crashed", where: frames(exit.cause.reasons.find(Cause.isDieReason)?.defect) }
  } catch (error) {
    return { _tag: "Crashed", where: frames(error) }
  }
}

/** Where a parser bug happened, without its message: a message may quote bytes of the file. */
const frames = (defect: unknown): string =>
  defect instanceof Error && defect.stack !== undefined
    ? `${defect.name}\n${defect.stack.split("\n").filter((line) => line.trimStart().startsWith("at ")).join("\n")}`
    : typeof defect

parentPort?.on("message", (request: OpenRequest) => parentPort?.postMessage(open(request)))
// Loaded and listening: the opener starts a file's time limit only from here, not from a start-up
// that a busy machine may make slow.
parentPort?.postMessage({ _tag: "Ready" })
